/**
 * `npm run bench -- suggest-vectors [--skills 54000] [--dims 768] [--queries 40]`: the nearest-skill scan over an
 * embedding service's vectors (what a suggestion runs per need with EMBEDDINGS_URL and no Meilisearch), against
 * the baseline in the same process: the same vectors in a Map of arrays scanned one at a time (the store's
 * earlier form). Rounds alternate between the two; answers must be identical. Prints ms per scan and the ratio.
 *
 * `--int8 [--scanned 8400]`: the LSA model's scan instead (int8 rows of 128 dimensions): `--scanned` rows of
 * the `--skills` (the mean a request scans at the benchmark scale, `suggest-profile --census`) through the
 * WebAssembly SIMD kernel against the JavaScript loop (`dots`) in the same process; ms per scan, the ratio,
 * the largest difference of a cosine, and how many first-50 lists came out the same.
 */
import { parseArgs } from 'node:util';
import { dots } from '../../apps/api/src/suggest/dots.js';
import { VectorStore } from '../../apps/api/src/suggest/embeddings.js';
import { Int8DotKernel } from '../../apps/api/src/suggest/int8-dots.js';
import { topScoredSlots } from '../../apps/api/src/suggest/top-slots.js';
import { VectorRows } from '../../apps/api/src/suggest/vector-rows.js';
import { Rng } from '../lib/rng.js';
import { percentile, round } from '../lib/stats.js';

function unitVector(rng: Rng, dims: number): Float32Array {
  const v = Float32Array.from({ length: dims }, () => rng.next() * 2 - 1);
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm);
  for (let i = 0; i < dims; i++) v[i] = v[i]! / norm;
  return v;
}

const mean = (l: number[]) => l.reduce((x, y) => x + y, 0) / l.length;

/** The baseline: a Map of vectors, one dot product at a time. */
function mapScan(held: Map<number, Float32Array>, q: Float32Array, depth: number) {
  const slots = new Uint32Array(held.size);
  const scores = new Float64Array(held.size);
  let count = 0;
  for (const [slot, v] of held) {
    let dot = 0;
    for (let i = 0; i < v.length; i++) dot += v[i]! * q[i]!;
    slots[count] = slot;
    scores[count++] = dot;
  }
  return topScoredSlots(slots, scores, count, depth, () => true);
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      skills: { type: 'string', default: '54000' },
      dims: { type: 'string', default: '768' },
      queries: { type: 'string', default: '40' },
      rounds: { type: 'string', default: '3' },
      int8: { type: 'boolean', default: false },
      scanned: { type: 'string', default: '8400' },
    },
  });
  if (values.int8) {
    int8Scan(Number(values.skills), Number(values.scanned), Number(values.queries), Number(values.rounds));
    return;
  }
  const skills = Number(values.skills);
  const dims = Number(values.dims);
  const rng = new Rng(25);
  const store = new VectorStore();
  const held = new Map<number, Float32Array>();
  for (let slot = 0; slot < skills; slot++) {
    const v = unitVector(rng, dims);
    store.set(slot, v);
    held.set(slot, Float32Array.from(v));
  }
  const queries = Array.from({ length: Number(values.queries) }, () => unitVector(rng, dims));
  const times = { store: [] as number[], map: [] as number[] };
  let differing = 0;
  for (let r = 0; r < Number(values.rounds) + 1; r++) {
    for (const q of queries) {
      let t = performance.now();
      const a = store.nearest(q, 50, () => true);
      const storeMs = performance.now() - t;
      t = performance.now();
      const b = mapScan(held, q, 50);
      const mapMs = performance.now() - t;
      if (JSON.stringify(a) !== JSON.stringify(b)) differing++;
      // The first round warms both up (JIT).
      if (r === 0) continue;
      times.store.push(storeMs);
      times.map.push(mapMs);
    }
  }
  console.log(`${skills} vectors of ${dims} dimensions, ${queries.length} queries x ${values.rounds} rounds`);
  console.log(
    `flat rows, four at once: mean ${round(mean(times.store), 2)} ms, p99 ${round(percentile(times.store, 99), 2)} ms`,
  );
  console.log(
    `Map, one at a time (baseline): mean ${round(mean(times.map), 2)} ms, p99 ${round(percentile(times.map, 99), 2)} ms`,
  );
  console.log(`ratio ${round(mean(times.map) / mean(times.store), 2)}; answers differing: ${differing}`);
  if (differing > 0) process.exitCode = 1;
}

/** The LSA model's int8 scan: the SIMD kernel against the JavaScript loop (see the file's comment). */
function int8Scan(skills: number, scanned: number, queryCount: number, rounds: number): void {
  const dims = 128;
  const rng = new Rng(26);
  const kernel = new Int8DotKernel();
  const rows = new VectorRows(dims, 0, kernel.storage);
  for (let slot = 0; slot < skills; slot++)
    rows.set(
      slot,
      Int8Array.from(unitVector(rng, dims), (x) => Math.round(x * 127)),
    );
  const queries = Array.from({ length: queryCount }, () => {
    const slots = Uint32Array.from({ length: scanned }, () => Math.floor(rng.next() * skills));
    return { q: unitVector(rng, dims), slots, bases: Int32Array.from(slots, (s) => rows.row(s) * dims) };
  });
  const simd = new Float64Array(scanned);
  const plain = new Float64Array(scanned);
  const times = { simd: [] as number[], plain: [] as number[] };
  let sameTop = 0;
  let largest = 0;
  for (let r = 0; r < rounds + 1; r++) {
    for (const { q, slots, bases } of queries) {
      let t = performance.now();
      kernel.dots(rows.values, bases, scanned, q, simd);
      const a = topScoredSlots(slots, simd, scanned, 50, () => true);
      const simdMs = performance.now() - t;
      t = performance.now();
      dots(rows.values, bases, scanned, q, plain);
      const b = topScoredSlots(slots, plain, scanned, 50, () => true);
      const plainMs = performance.now() - t;
      // The first round warms both up (JIT).
      if (r === 0) continue;
      times.simd.push(simdMs);
      times.plain.push(plainMs);
      if (a.map((h) => h.slot).join() === b.map((h) => h.slot).join()) sameTop++;
      for (let i = 0; i < scanned; i++) largest = Math.max(largest, Math.abs(simd[i]! - plain[i]!) / 127);
    }
  }
  console.log(
    `${scanned} of ${skills} int8 rows of ${dims} dimensions a scan, ${queryCount} queries x ${rounds} rounds`,
  );
  console.log(
    `WebAssembly SIMD: mean ${round(mean(times.simd), 3)} ms, p99 ${round(percentile(times.simd, 99), 3)} ms`,
  );
  console.log(
    `JavaScript loop (baseline): mean ${round(mean(times.plain), 3)} ms, p99 ${round(percentile(times.plain, 99), 3)} ms`,
  );
  console.log(
    `ratio ${round(mean(times.plain) / mean(times.simd), 2)}; largest cosine difference ${largest.toExponential(2)}; first 50 the same in ${sameTop} of ${times.simd.length} scans`,
  );
}
