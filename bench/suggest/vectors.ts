/**
 * `npm run bench -- suggest-vectors [--skills 54000] [--dims 768] [--queries 40]`: the nearest-skill scan over an
 * embedding service's vectors (what a suggestion runs per need with EMBEDDINGS_URL and no Meilisearch), against
 * the baseline in the same process: the same vectors in a Map of arrays scanned one at a time (the store's
 * earlier form). Rounds alternate between the two; answers must be identical. Prints ms per scan and the ratio.
 */
import { parseArgs } from 'node:util';
import { VectorStore } from '../../apps/api/src/suggest/embeddings.js';
import { topScoredSlots } from '../../apps/api/src/suggest/top-slots.js';
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
    },
  });
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
  const mean = (l: number[]) => l.reduce((x, y) => x + y, 0) / l.length;
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
