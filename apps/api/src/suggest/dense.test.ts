import { describe, expect, it } from 'vitest';
import { TimeSlicer } from '../runtime/time-slice.js';
import { DenseModel, DIMS, foldTermRows, orthonormalize, sparseTimes } from './dense.js';
import { SemanticModel } from './model.js';
import { toUnit } from './unit-vector.js';

/** Skills of a few topics, each described in its own mix of the topic's words. */
const TOPICS = [
  ['invoice', 'receipt', 'bookkeeping', 'expense', 'tax', 'ledger'],
  ['kubernetes', 'pod', 'cluster', 'helm', 'deployment', 'container'],
  ['resume', 'cover', 'letter', 'interview', 'hiring', 'candidate'],
  ['timing', 'constant', 'comparison', 'hmac', 'signature', 'secret'],
];

async function build(slice?: TimeSlicer): Promise<{ model: SemanticModel; topicOf: Map<number, number> }> {
  const model = new SemanticModel();
  const topicOf = new Map<number, number>();
  let slot = 0;
  TOPICS.forEach((words, t) => {
    for (let i = 0; i < 12; i++) {
      // Each skill names three of its topic's six words: two skills of a topic may share none.
      const mine = [words[i % 6]!, words[(i + 1) % 6]!, words[(i + 3) % 6]!];
      model.set(slot, {
        name: `${mine[0]}-tool-${t}-${i}`,
        folder: '',
        description: `Helps with ${mine.join(' and ')}.`,
        headings: '',
        body: `${mine.join(' ')} ${mine[1]} ${mine[2]}`,
      });
      topicOf.set(slot, t);
      slot++;
    }
  });
  await model.mineRelated(slice);
  return { model, topicOf };
}

const query = (words: string[]) => words.map((w) => ({ term: w, weight: 1, of: w }));

/**
 * An index with more terms than the model keeps dimensions (8 topics of 60 made-up words, 60 skills each
 * naming 6 of their topic's): the SVD must drop directions, so a skill nears a query through the words its
 * topic's skills share, not its own. (Under DIMS terms the model is exact and shares nothing.)
 */
async function buildLarge(
  order: (skills: number[]) => number[] = (skills) => skills,
): Promise<{ model: SemanticModel; topicOf: Map<number, number> }> {
  const model = new SemanticModel();
  const topicOf = new Map<number, number>();
  const word = (t: number, k: number) =>
    `${'abcdefgh'[t]}${String.fromCharCode(97 + (k % 26))}${'xyz'[Math.floor(k / 26)]}w`;
  // Skill s is the i-th of topic t; `order` says in which order the model is given them (slot = place).
  order(Array.from({ length: 480 }, (_, s) => s)).forEach((s, slot) => {
    const t = Math.floor(s / 60);
    const mine = [0, 1, 4, 9, 16, 25].map((d) => word(t, ((s % 60) + d) % 60));
    model.set(slot, {
      name: mine.slice(0, 2).join('-'),
      folder: '',
      description: mine.join(' '),
      headings: '',
      body: mine.join(' '),
    });
    topicOf.set(slot, t);
  });
  await model.mineRelated();
  return { model, topicOf };
}

describe('LSA dense model', () => {
  it('ranks skills of the query topic first', async () => {
    const { model, topicOf } = await build();
    const dense = await DenseModel.build(model);
    const q = dense.queryVector(query(['hmac', 'signature']))!;
    expect(q).not.toBeNull();
    const hits = dense.nearest(q, 12, () => true);
    expect(hits.length).toBeGreaterThan(6);
    for (const h of hits.slice(0, 6)) expect(topicOf.get(h.slot)).toBe(3);
  });

  it('brings a skill near a query through its topic when it shares none of the query words', async () => {
    const { model, topicOf } = await buildLarge();
    const dense = await DenseModel.build(model);
    const words = ['daxw', 'dbxw'];
    const q = dense.queryVector(query(words))!;
    const holds = (s: number) => words.some((w) => model.termWeights(s)!.terms.includes(model.termIdOf(w)!));
    const same = [...topicOf.keys()].filter((s) => topicOf.get(s) === 3 && !holds(s));
    const others = [...topicOf.keys()].filter((s) => topicOf.get(s) !== 3);
    const mean = (slots: number[]) => slots.reduce((sum, s) => sum + dense.cosine(s, q), 0) / slots.length;
    expect(same.length).toBeGreaterThan(40);
    expect(mean(same)).toBeGreaterThan(mean(others) + 0.03);
  });

  it('is the same model whatever order the skills came in', async () => {
    const cosines = async (order: (skills: number[]) => number[]) => {
      const { model } = await buildLarge(order);
      const dense = await DenseModel.build(model);
      const q = dense.queryVector(query(['daxw', 'dbxw', 'eaxw']))!;
      return new Map(model.slots().all.map((slot) => [model.keyOf(slot), dense.cosine(slot, q)]));
    };
    const forward = await cosines((s) => s);
    const reversed = await cosines((s) => [...s].reverse());
    let moved = 0;
    for (const [key, cosine] of forward) moved = Math.max(moved, Math.abs(cosine - reversed.get(key)!));
    // The random matrix was drawn in the order the words were first met, so the cosines moved with the
    // order skills came in (by up to 0.15 here); each word's row is now drawn from the word itself.
    expect(moved).toBeLessThan(0.01);
  });

  it('builds over an empty index (a fresh hub) and finds nothing', async () => {
    const dense = await DenseModel.build(new SemanticModel());
    expect(dense.stats()).toMatchObject({ terms: 0, skills: 0, clusters: 0 });
    expect(dense.nearest(new Float32Array(128).fill(1 / Math.sqrt(128)), 10, () => true)).toEqual([]);
  });

  it('folds in added skills, forgets deleted ones, and respects admit', async () => {
    const { model } = await build();
    const dense = await DenseModel.build(model);
    model.set(1000, {
      name: 'helm-charts',
      folder: '',
      description: 'Kubernetes helm charts for a cluster',
      headings: '',
      body: 'pod container',
    });
    dense.add(1000);
    const q = dense.queryVector(query(['helm', 'kubernetes']))!;
    expect(dense.nearest(q, 60, () => true).map((h) => h.slot)).toContain(1000);
    expect(dense.nearest(q, 60, (s) => s !== 1000).map((h) => h.slot)).not.toContain(1000);
    dense.delete(1000);
    expect(dense.nearest(q, 60, () => true).map((h) => h.slot)).not.toContain(1000);
    expect(dense.cosine(1000, q)).toBe(0);
  });

  it('answers as before after skills leave and others take their rows (the same nearest as a fresh fold)', async () => {
    const { model } = await build();
    const dense = await DenseModel.build(model);
    const q = dense.queryVector(query(['invoice', 'ledger']))!;
    const before = dense.nearest(q, 48, () => true);
    // Every other skill leaves, then comes back: rows and cluster positions are reshuffled.
    for (let s = 0; s < 48; s += 2) dense.delete(s);
    expect(dense.nearest(q, 48, () => true).map((h) => h.slot)).toEqual(
      before.filter((h) => h.slot % 2 === 1).map((h) => h.slot),
    );
    for (let s = 0; s < 48; s += 2) dense.add(s);
    expect(dense.nearest(q, 48, () => true)).toEqual(before);
  });

  it('builds in slices that let requests in, into the same model as a build that never pauses', async () => {
    const whole = new TimeSlicer(Number.POSITIVE_INFINITY);
    const { model: unsliced } = await build(whole);
    const once = await DenseModel.build(unsliced, whole);
    expect(whole.pauses).toBe(0);
    // A slice of 0 ms pauses at every row: an event-loop turn scheduled before the build runs during it.
    const everyRow = new TimeSlicer(0);
    let turned = false;
    setImmediate(() => {
      turned = true;
    });
    const { model } = await build(everyRow);
    expect(turned).toBe(true);
    const sliced = await DenseModel.build(model, everyRow);
    expect(everyRow.pauses).toBeGreaterThan(48);
    for (const term of ['hmac', 'invoic', 'kubernet', 'resum']) {
      expect(model.relatedTerms(term)).toEqual(unsliced.relatedTerms(term));
    }
    for (const words of [['hmac', 'signature'], ['invoice', 'ledger'], ['helm']]) {
      const q = sliced.queryVector(query(words))!;
      expect(q).toEqual(once.queryVector(query(words)));
      expect(sliced.nearest(q, 48, () => true)).toEqual(once.nearest(q, 48, () => true));
    }
  });

  it('holds a skill in about DIMS bytes plus bookkeeping', async () => {
    const { model } = await build();
    const dense = await DenseModel.build(model);
    expect(dense.stats().skills).toBe(48);
    expect(dense.queryVector(query(['nothing-known']))).toBeNull();
  });
});

/** A deterministic generator for the reference checks (mulberry32). */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Modified Gram-Schmidt twice, one column at a time: what `orthonormalize` must equal to the last bit. */
function referenceOrthonormalize(a: Float64Array, rows: number, cols: number): void {
  const col = new Float64Array(rows);
  const basis: Float64Array[] = [];
  for (let j = 0; j < cols; j++) {
    for (let i = 0; i < rows; i++) col[i] = a[i * cols + j]!;
    for (let pass = 0; pass < 2; pass++) {
      for (const b of basis) {
        let dot = 0;
        for (let i = 0; i < rows; i++) dot += col[i]! * b[i]!;
        for (let i = 0; i < rows; i++) col[i]! -= dot * b[i]!;
      }
    }
    let norm = 0;
    for (let i = 0; i < rows; i++) norm += col[i]! * col[i]!;
    norm = Math.sqrt(norm) || 1;
    const unit = new Float64Array(rows);
    for (let i = 0; i < rows; i++) unit[i] = col[i]! / norm;
    basis.push(unit);
    for (let i = 0; i < rows; i++) a[i * cols + j] = unit[i]!;
  }
}

/** One row at a time into a float32 vector, then unit length: what `foldTermRows` must equal to the last bit. */
function referenceFold(
  vectors: Int8Array,
  scales: Float32Array,
  rows: Int32Array,
  weights: Float64Array,
  count: number,
): Float32Array | null {
  if (count === 0) return null;
  const out = new Float32Array(DIMS);
  for (let e = 0; e < count; e++)
    for (let j = 0; j < DIMS; j++) out[j]! += weights[e]! * scales[rows[e]!]! * vectors[rows[e]! * DIMS + j]!;
  return toUnit(out);
}

describe('the LSA build arithmetic, against one column and one row at a time', () => {
  it('orthonormalises to the same bits as modified Gram-Schmidt one column at a time', async () => {
    const rand = seeded(7);
    for (const [rows, cols] of [
      [1, 1],
      [5, 1],
      [40, 2],
      [300, 17],
      [64, 64],
    ] as const) {
      const a = Float64Array.from({ length: rows * cols }, () => rand() * 2 - 1);
      // A column that repeats another, and a zero one: the degenerate cases of a sparse term matrix.
      if (cols > 3)
        for (let i = 0; i < rows; i++) {
          a[i * cols + 2] = a[i * cols]!;
          a[i * cols + 3] = 0;
        }
      const expected = Float64Array.from(a);
      referenceOrthonormalize(expected, rows, cols);
      await orthonormalize(a, rows, cols, new TimeSlicer(0));
      expect(Buffer.from(a.buffer).equals(Buffer.from(expected.buffer))).toBe(true);
    }
  });

  it('multiplies a sparse matrix to the same bits as one entry at a time, for every remainder of four', async () => {
    const rand = seeded(13);
    const outer = 14;
    const inner = 9;
    const width = 6;
    // Row r holds r entries (0 to 13), in no particular column order, some columns twice.
    const start = Int32Array.from({ length: outer + 1 }, (_, r) => (r * (r - 1)) / 2);
    const entries = start[outer]!;
    const index = Int32Array.from({ length: entries }, () => Math.floor(rand() * inner));
    const values = Float64Array.from({ length: entries }, () => rand() * 2 - 1);
    const m = Float64Array.from({ length: inner * width }, () => rand() * 2 - 1);
    const expected = new Float64Array(outer * width);
    for (let r = 0; r < outer; r++)
      for (let k = start[r]!; k < start[r + 1]!; k++)
        for (let j = 0; j < width; j++) expected[r * width + j]! += values[k]! * m[index[k]! * width + j]!;
    const got = await sparseTimes(start, index, values, outer, m, width, new TimeSlicer(0));
    expect(Buffer.from(got.buffer).equals(Buffer.from(expected.buffer))).toBe(true);
  });

  it('folds term rows to the same float32 bits as one row at a time, for every remainder of four', () => {
    const rand = seeded(11);
    const terms = 20;
    const vectors = Int8Array.from({ length: terms * DIMS }, () => Math.round(rand() * 254 - 127));
    const scales = Float32Array.from({ length: terms }, () => rand() / 100);
    for (let count = 0; count <= 13; count++) {
      const rows = Int32Array.from({ length: count }, () => Math.floor(rand() * terms));
      const weights = Float64Array.from({ length: count }, () => rand() * 3);
      const got = foldTermRows(vectors, scales, rows, weights, count);
      const expected = referenceFold(vectors, scales, rows, weights, count);
      if (expected === null) expect(got).toBeNull();
      else expect(got && Buffer.from(got.buffer).equals(Buffer.from(expected.buffer))).toBe(true);
    }
    // Rows that cancel out fold to nothing.
    const zero = new Int8Array(DIMS * 2);
    expect(foldTermRows(zero, new Float32Array(2), Int32Array.of(0, 1), Float64Array.of(1, 1), 2)).toBeNull();
  });
});
