import { TimeSlicer } from '../runtime/time-slice.js';
import { dots } from './dots.js';
import { grown } from './grow.js';
import { Int8DotKernel } from './int8-dots.js';
import { InvertedFile } from './inverted-file.js';
import type { QueryTerm, SemanticModel } from './model.js';
import { stableHash } from './stable-hash.js';
import type { SlotHit } from './top-slots.js';
import { toUnit } from './unit-vector.js';
import { VectorRows } from './vector-rows.js';

/**
 * The dense side of the default semantic model: latent semantic analysis (LSA) of the index, built from
 * the hub's own skills with nothing to download. A truncated SVD of the tf-idf term-skill matrix (names,
 * descriptions, headings and the opening of bodies, as the term model weighs them; randomized SVD, Halko
 * et al. 2011) gives every term a vector; a skill's vector and a message's vector are the tf-idf weighted
 * sums of their terms' vectors, so a message reaches a skill that shares few of its words but many of
 * their neighbours. Vectors are int8 (a skill costs DIMS bytes plus a few of bookkeeping); the nearest skills are
 * found through an inverted file (`inverted-file.ts`: spherical k-means clusters, the PROBE nearest scanned), so a
 * request reads about PROBE/sqrt(N) of the skills, never all of them.
 */

/** Latent dimensions kept (a multiple of 4: the dot products take four terms a turn). */
export const DIMS = 128;
/** Extra random directions of the range finder, and its power iterations (accuracy of the top DIMS). */
const OVERSAMPLE = 16;
const POWER_ITERATIONS = 2;
/** Skills the SVD is computed over (the rest are folded in): bounds the build at any index size. */
const SVD_SAMPLE = 20_000;
/** Terms in the matrix: held by at least MIN_DF skills and at most MAX_DF_SHARE of them. */
const MIN_DF = 2;
const MAX_DF_SHARE = 0.3;
/** Clusters scanned per query (see InvertedFile). */
const PROBE = 8;
/** Int8 scale of a unit vector's coordinates. */
const Q = 127;

/** The model's fixed seed: the same index gives the same model. */
const SEED = 0x5eed;

/** A deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Projects `x` and `y` off each of `basis` in turn (modified Gram-Schmidt: each projection from what the one
 * before left). Both columns in one pass over each basis vector, and each projection's subtraction in the
 * pass that takes the next dot product: two independent sums in flight where one waited on each addition.
 * Each column's arithmetic is that of projecting it alone, in the same order.
 */
function projectTwo(x: Float64Array, y: Float64Array, basis: readonly Float64Array[]): void {
  const rows = x.length;
  let prev: Float64Array | null = null;
  let px = 0;
  let py = 0;
  for (const b of basis) {
    let dx = 0;
    let dy = 0;
    if (prev) {
      for (let i = 0; i < rows; i++) {
        const p = prev[i]!;
        const xi = x[i]! - px * p;
        const yi = y[i]! - py * p;
        x[i] = xi;
        y[i] = yi;
        dx += xi * b[i]!;
        dy += yi * b[i]!;
      }
    } else {
      for (let i = 0; i < rows; i++) {
        dx += x[i]! * b[i]!;
        dy += y[i]! * b[i]!;
      }
    }
    prev = b;
    px = dx;
    py = dy;
  }
  if (prev) {
    for (let i = 0; i < rows; i++) {
      x[i]! -= px * prev[i]!;
      y[i]! -= py * prev[i]!;
    }
  }
}

/**
 * Orthonormalises the `cols` columns of a row-major `rows` x `cols` matrix in place (modified Gram-Schmidt,
 * twice). Pipelined: column j's second pass runs beside column j + 1's first (both over the basis before
 * j), then column j + 1 is projected off column j's unit vector, which ends its first pass; every column
 * sees the same projections in the same order as one column at a time, so the result is the same to the
 * last bit (`dense.test.ts`), in two thirds of the time (the orthonormalisations were 6 s of the model's
 * build at 54,061 skills).
 */
export async function orthonormalize(
  a: Float64Array,
  rows: number,
  cols: number,
  slice: TimeSlicer,
): Promise<void> {
  const column = (j: number) => {
    const col = new Float64Array(rows);
    if (j < cols) for (let i = 0; i < rows; i++) col[i] = a[i * cols + j]!;
    return col;
  };
  const basis: Float64Array[] = [];
  // Column j after its first pass (column 0: nothing to project it off).
  let current = column(0);
  for (let j = 0; j < cols; j++) {
    // The next column during its first pass (past the last column: zeros, projected for nothing).
    const next = column(j + 1);
    projectTwo(current, next, basis);
    let norm = 0;
    for (let i = 0; i < rows; i++) norm += current[i]! * current[i]!;
    norm = Math.sqrt(norm) || 1;
    const unit = new Float64Array(rows);
    for (let i = 0; i < rows; i++) unit[i] = current[i]! / norm;
    basis.push(unit);
    for (let i = 0; i < rows; i++) a[i * cols + j] = unit[i]!;
    let dot = 0;
    for (let i = 0; i < rows; i++) dot += next[i]! * unit[i]!;
    for (let i = 0; i < rows; i++) next[i]! -= dot * unit[i]!;
    current = next;
    if (slice.due()) await slice.pause();
  }
}

/**
 * The product of a sparse matrix (`outer` rows; row r's entries `start[r]` to `start[r + 1]` of `index`,
 * `values`) with the dense row-major `m` of `width` columns. Each output row adds its entries' rows of `m`
 * in entry order, four entries a pass with the sum held in a register: the output row is read and written
 * once per four entries instead of once per entry, and the result is that of one entry at a time to the last
 * bit (`dense.test.ts`). The SVD's products (six per build) were a quarter of the LSA build at 54,061 skills.
 */
export async function sparseTimes(
  start: Int32Array,
  index: Int32Array,
  values: Float64Array,
  outer: number,
  m: Float64Array,
  width: number,
  slice: TimeSlicer,
): Promise<Float64Array> {
  const out = new Float64Array(outer * width);
  for (let r = 0; r < outer; r++) {
    if (slice.due()) await slice.pause();
    const to = r * width;
    const end = start[r + 1]!;
    let k = start[r]!;
    for (; k + 3 < end; k += 4) {
      const v0 = values[k]!;
      const v1 = values[k + 1]!;
      const v2 = values[k + 2]!;
      const v3 = values[k + 3]!;
      const b0 = index[k]! * width;
      const b1 = index[k + 1]! * width;
      const b2 = index[k + 2]! * width;
      const b3 = index[k + 3]! * width;
      for (let j = 0; j < width; j++) {
        let o = out[to + j]! + v0 * m[b0 + j]!;
        o += v1 * m[b1 + j]!;
        o += v2 * m[b2 + j]!;
        out[to + j] = o + v3 * m[b3 + j]!;
      }
    }
    for (; k < end; k++) {
      const v = values[k]!;
      const from = index[k]! * width;
      for (let j = 0; j < width; j++) out[to + j]! += v * m[from + j]!;
    }
  }
  return out;
}

/** Eigen-decomposition of a symmetric n x n matrix (cyclic Jacobi): eigenvalues and column eigenvectors. */
async function symmetricEigen(
  m: Float64Array,
  n: number,
  slice: TimeSlicer,
): Promise<{ values: Float64Array; vectors: Float64Array }> {
  const a = Float64Array.from(m);
  const v = new Float64Array(n * n);
  for (let i = 0; i < n; i++) v[i * n + i] = 1;
  for (let sweep = 0; sweep < 60; sweep++) {
    if (slice.due()) await slice.pause();
    let off = 0;
    for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) off += a[p * n + q]! ** 2;
    if (off < 1e-20) break;
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        const apq = a[p * n + q]!;
        if (Math.abs(apq) < 1e-300) continue;
        const theta = (a[q * n + q]! - a[p * n + p]!) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < n; k++) {
          const akp = a[k * n + p]!;
          const akq = a[k * n + q]!;
          a[k * n + p] = c * akp - s * akq;
          a[k * n + q] = s * akp + c * akq;
        }
        for (let k = 0; k < n; k++) {
          const apk = a[p * n + k]!;
          const aqk = a[q * n + k]!;
          a[p * n + k] = c * apk - s * aqk;
          a[q * n + k] = s * apk + c * aqk;
        }
        for (let k = 0; k < n; k++) {
          const vkp = v[k * n + p]!;
          const vkq = v[k * n + q]!;
          v[k * n + p] = c * vkp - s * vkq;
          v[k * n + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  const values = new Float64Array(n);
  for (let i = 0; i < n; i++) values[i] = a[i * n + i]!;
  return { values, vectors: v };
}

/**
 * The unit vector of `count` weighted rows of int8 term vectors (row `rows[e]` times `weights[e]` times its
 * scale), or null when there are none or they sum to zero. Each coordinate adds the rows' products in row
 * order, rounded to float32 after each (as when stored one row at a time), four rows a pass: the coordinate
 * is then read and written once per four rows instead of once per row (every skill's vector is folded at
 * each build: 5 s of it at 54,061 skills, one row a pass). The same vector to the last bit (`dense.test.ts`).
 */
export function foldTermRows(
  vectors: Int8Array,
  scales: Float32Array,
  rows: Int32Array,
  weights: Float64Array,
  count: number,
): Float32Array | null {
  if (count === 0) return null;
  const out = new Float32Array(DIMS);
  let e = 0;
  for (; e + 3 < count; e += 4) {
    const s0 = weights[e]! * scales[rows[e]!]!;
    const s1 = weights[e + 1]! * scales[rows[e + 1]!]!;
    const s2 = weights[e + 2]! * scales[rows[e + 2]!]!;
    const s3 = weights[e + 3]! * scales[rows[e + 3]!]!;
    const b0 = rows[e]! * DIMS;
    const b1 = rows[e + 1]! * DIMS;
    const b2 = rows[e + 2]! * DIMS;
    const b3 = rows[e + 3]! * DIMS;
    for (let j = 0; j < DIMS; j++) {
      let o = Math.fround(out[j]! + s0 * vectors[b0 + j]!);
      o = Math.fround(o + s1 * vectors[b1 + j]!);
      o = Math.fround(o + s2 * vectors[b2 + j]!);
      out[j] = o + s3 * vectors[b3 + j]!;
    }
  }
  for (; e < count; e++) {
    const scale = weights[e]! * scales[rows[e]!]!;
    const base = rows[e]! * DIMS;
    for (let j = 0; j < DIMS; j++) out[j]! += scale * vectors[base + j]!;
  }
  return toUnit(out);
}

/** What a snapshot keeps of a DenseModel (see `DenseModel.snapshot`). */
export interface DenseModelSnapshot {
  /** The term model's term id of each row of the vectors. */
  terms: Int32Array;
  idf: Float32Array;
  vectors: Int8Array;
  scales: Float32Array;
  centroids: Float32Array;
}

/** A skill the dense model ranks, with its cosine to the message. */
export type DenseHit = SlotHit;

/** The LSA model: int8 term vectors, int8 unit skill vectors, and an inverted file over them. */
export class DenseModel {
  /** Model term id -> row of the term vectors. */
  private readonly rows = new Map<number, number>();
  private readonly termIdf: Float32Array;
  /** Term vectors, int8 with a scale per row. */
  private readonly termVectors: Int8Array;
  private readonly termScale: Float32Array;
  /** The skills' vectors live in the SIMD kernel's memory, which scans them. */
  private readonly kernel = new Int8DotKernel();
  private readonly skills = new VectorRows(DIMS, 0, this.kernel.storage);
  /** The skills' clusters (the nearest-skill search reads only the probed ones). */
  private readonly ivf = new InvertedFile(this.skills, DIMS, Q, PROBE, this.kernel.dots);
  /** Scratch of `cosine` (one row). */
  private readonly oneBase = new Int32Array(1);
  private readonly oneDot = new Float64Array(1);
  /** Scratch of `fold`: the term rows to fold and their weights. */
  private foldRows = new Int32Array(256);
  private foldWeights = new Float64Array(256);

  private constructor(
    private readonly model: SemanticModel,
    terms: ArrayLike<number>,
    idf: Float32Array,
    termVectors: Int8Array,
    termScale: Float32Array,
  ) {
    for (let row = 0; row < terms.length; row++) this.rows.set(terms[row]!, row);
    this.termIdf = idf;
    this.termVectors = termVectors;
    this.termScale = termScale;
  }

  /** The `rows` x DIMS term vectors as int8, with a scale per row (the row's largest coordinate / Q). */
  private static quantize(vectors: Float64Array, rows: number): { values: Int8Array; scales: Float32Array } {
    const values = new Int8Array(rows * DIMS);
    const scales = new Float32Array(rows);
    for (let r = 0; r < rows; r++) {
      let max = 0;
      for (let j = 0; j < DIMS; j++) max = Math.max(max, Math.abs(vectors[r * DIMS + j]!));
      const scale = max / Q || 1;
      scales[r] = scale;
      for (let j = 0; j < DIMS; j++) values[r * DIMS + j] = Math.round(vectors[r * DIMS + j]! / scale);
    }
    return { values, scales };
  }

  /**
   * Builds the model from the term model's skills (randomized truncated SVD of their tf-idf matrix), in
   * `slice`s: a minute of work at 57,000 skills, and requests are answered meanwhile.
   */
  static async build(model: SemanticModel, slice = new TimeSlicer()): Promise<DenseModel> {
    const slots = model.slots();
    const { all, distinct } = slots;
    // The SVD sees each skill once (copies published in several repositories would weigh their terms twice),
    // and past SVD_SAMPLE the skills of the smallest hashes of their name and description: a skill added
    // or removed changes the sample by itself (taken every so many places, every place after it moved).
    const sample =
      distinct.length <= SVD_SAMPLE
        ? distinct
        : distinct
            .map((slot) => ({ slot, hash: stableHash(model.keyOf(slot), SEED) }))
            .sort((a, b) => a.hash - b.hash || a.slot - b.slot)
            .slice(0, SVD_SAMPLE)
            .map((s) => s.slot)
            .sort((a, b) => a - b);
    const n = sample.length;
    const sampleDf = new Map<number, number>();
    const docs = sample.map((slot) => model.termWeights(slot)!);
    for (const d of docs) {
      if (slice.due()) await slice.pause();
      for (const id of d.terms) sampleDf.set(id, (sampleDf.get(id) ?? 0) + 1);
    }
    const terms = [...sampleDf]
      .filter(([, df]) => df >= MIN_DF && df <= Math.max(MIN_DF, MAX_DF_SHARE * n))
      .map(([id]) => id)
      .sort((a, b) => a - b);
    const column = new Map<number, number>();
    terms.forEach((id, c) => {
      column.set(id, c);
    });
    const idf = Float32Array.from(terms, (id) => Math.log(1 + n / sampleDf.get(id)!));
    // The tf-idf matrix, rows unit length (CSR).
    const rowStart = new Int32Array(n + 1);
    const cols: number[] = [];
    const vals: number[] = [];
    for (let i = 0; i < n; i++) {
      if (slice.due()) await slice.pause();
      const d = docs[i]!;
      const from = cols.length;
      let norm = 0;
      d.terms.forEach((id, k) => {
        const c = column.get(id);
        if (c === undefined) return;
        const v = Math.log1p(d.weights[k]!) * idf[c]!;
        cols.push(c);
        vals.push(v);
        norm += v * v;
      });
      norm = Math.sqrt(norm) || 1;
      for (let k = from; k < vals.length; k++) vals[k]! /= norm;
      rowStart[i + 1] = cols.length;
    }
    const T = terms.length;
    const l = Math.min(DIMS + OVERSAMPLE, Math.max(1, Math.min(n, T)));
    // The transpose (CSC), skills ascending within each term: Xᵀ M adds each term's products in the order
    // X's rows held them, as one pass over the rows did.
    const colStart = new Int32Array(T + 1);
    for (const c of cols) colStart[c + 1]!++;
    for (let c = 0; c < T; c++) colStart[c + 1]! += colStart[c]!;
    const rowOf = new Int32Array(cols.length);
    const valT = new Float64Array(cols.length);
    const filled = colStart.slice(0, T);
    for (let i = 0; i < n; i++) {
      for (let k = rowStart[i]!; k < rowStart[i + 1]!; k++) {
        const at = filled[cols[k]!]!++;
        rowOf[at] = i;
        valT[at] = vals[k]!;
      }
    }
    const colOf = Int32Array.from(cols);
    const valOf = Float64Array.from(vals);
    const xTimes = (m: Float64Array) => sparseTimes(rowStart, colOf, valOf, n, m, l, slice);
    const xtTimes = (m: Float64Array) => sparseTimes(colStart, rowOf, valT, T, m, l, slice);
    // Each term's row of the random test matrix is drawn from the term itself, not from where it falls in
    // the vocabulary: a skill added or changed then moves the model by what it changes. Drawn in sequence,
    // one new term shifted every later term's row, and the top directions the range finder had not
    // converged on moved with them, so every message's scores moved (a Chinese skill's words entering the
    // index flipped an English message's abstention).
    const omega = new Float64Array(T * l);
    for (let c = 0; c < T; c++) {
      if (slice.due()) await slice.pause();
      const rand = random(stableHash(model.termName(terms[c]!), SEED));
      for (let i = c * l; i < (c + 1) * l; i++) {
        omega[i] = Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
      }
    }
    let y = await xTimes(omega);
    await orthonormalize(y, n, l, slice);
    for (let p = 0; p < POWER_ITERATIONS; p++) {
      const z = await xtTimes(y);
      await orthonormalize(z, T, l, slice);
      y = await xTimes(z);
      await orthonormalize(y, n, l, slice);
    }
    // B = Qᵀ X (held as its transpose, T x l); the right singular vectors come from eig(B Bᵀ).
    const bt = await xtTimes(y);
    const gram = new Float64Array(l * l);
    for (let c = 0; c < T; c++) {
      if (slice.due()) await slice.pause();
      for (let a = 0; a < l; a++) {
        const v = bt[c * l + a]!;
        if (v === 0) continue;
        for (let b = 0; b < l; b++) gram[a * l + b]! += v * bt[c * l + b]!;
      }
    }
    const { values, vectors } = await symmetricEigen(gram, l, slice);
    const order = [...values.keys()].sort((a, b) => values[b]! - values[a]!).slice(0, DIMS);
    // Term vectors: the right singular vectors V = Bᵀ w / σ (per kept eigenvector w of B Bᵀ), so a
    // skill's folded-in tf-idf row x V is its U Σ.
    const termVectors = new Float64Array(T * DIMS);
    for (let j = 0; j < order.length; j++) {
      if (slice.due()) await slice.pause();
      const e = order[j]!;
      const sigma = Math.sqrt(Math.max(values[e]!, 1e-12));
      for (let c = 0; c < T; c++) {
        let s = 0;
        for (let a = 0; a < l; a++) s += bt[c * l + a]! * vectors[a * l + e]!;
        termVectors[c * DIMS + j] = s / sigma;
      }
    }
    const quantized = DenseModel.quantize(termVectors, T);
    const dense = new DenseModel(model, terms, idf, quantized.values, quantized.scales);
    await dense.foldSkills(all, slice);
    // Clusters drawn around the vectors it was fitted on (the others are placed in them, never move them).
    await dense.ivf.build(all, (slot) => model.keyOf(slot), slice, slots.learning);
    return dense;
  }

  /** Every held skill's vector, folded from its terms' (in `slice`s). */
  private async foldSkills(all: readonly number[], slice: TimeSlicer): Promise<void> {
    this.skills.reserve(all.length, (all[all.length - 1] ?? -1) + 1);
    for (let i = 0; i < all.length; i++) {
      if (slice.due()) await slice.pause();
      this.skills.set(all[i]!, this.skillVector(all[i]!) ?? new Int8Array(DIMS));
    }
  }

  /** What a snapshot keeps of the model: the term vectors and the centroids (skill vectors are folded again). */
  snapshot(): DenseModelSnapshot {
    const terms = new Int32Array(this.rows.size);
    for (const [id, row] of this.rows) terms[row] = id;
    return {
      terms,
      idf: this.termIdf.slice(),
      vectors: this.termVectors.slice(),
      scales: this.termScale.slice(),
      centroids: this.ivf.centroidValues(),
    };
  }

  /**
   * The model a snapshot was taken of, over `model` (the term model restored from the same snapshot): each
   * skill's vector is folded from the stored term vectors and placed at the nearest stored centroid, as
   * every skill was after the build and every skill added since, so it answers as that model did. A few
   * seconds at 57,000 skills, against a minute for the SVD.
   */
  static async restore(
    model: SemanticModel,
    s: DenseModelSnapshot,
    slice = new TimeSlicer(),
  ): Promise<DenseModel> {
    const dense = new DenseModel(model, s.terms, s.idf, s.vectors, s.scales);
    const { all } = model.slots();
    await dense.foldSkills(all, slice);
    await dense.ivf.restore(all, s.centroids, slice);
    return dense;
  }

  /** A unit vector from the `count` term rows and weights gathered in `foldRows`, `foldWeights` (see foldTermRows). */
  private fold(count: number): Float32Array | null {
    return foldTermRows(this.termVectors, this.termScale, this.foldRows, this.foldWeights, count);
  }

  /** Appends a term row and its weight to what `fold` folds next (at `count`); returns the new count. */
  private foldEntry(count: number, row: number, weight: number): number {
    if (count === this.foldRows.length) {
      this.foldRows = grown(this.foldRows, count + 1);
      this.foldWeights = grown(this.foldWeights, count + 1);
    }
    this.foldRows[count] = row;
    this.foldWeights[count] = weight;
    return count + 1;
  }

  /** A skill's int8 unit vector from its terms (tf-idf weighted), or null when it holds no model term. */
  private skillVector(slot: number): Int8Array | null {
    const d = this.model.termWeights(slot);
    if (!d) return null;
    let count = 0;
    for (let k = 0; k < d.terms.length; k++) {
      const row = this.rows.get(d.terms[k]!);
      if (row !== undefined)
        count = this.foldEntry(count, row, Math.log1p(d.weights[k]!) * this.termIdf[row]!);
    }
    const v = this.fold(count);
    if (!v) return null;
    const q = new Int8Array(DIMS);
    for (let j = 0; j < DIMS; j++) q[j] = Math.round(v[j]! * Q);
    return q;
  }

  /** A message's unit vector from its weighted query terms (tf-idf as for skills), or null. */
  queryVector(terms: readonly QueryTerm[]): Float32Array | null {
    let count = 0;
    for (const q of terms) {
      const id = this.model.termIdOf(q.term);
      const row = id === undefined ? undefined : this.rows.get(id);
      if (row !== undefined) count = this.foldEntry(count, row, q.weight * this.termIdf[row]!);
    }
    return this.fold(count);
  }

  /** Cosine of a skill to a query vector (0 for a skill without a vector). */
  cosine(slot: number, q: Float32Array): number {
    const r = this.skills.row(slot);
    if (r < 0) return 0;
    this.oneBase[0] = r * DIMS;
    dots(this.skills.values, this.oneBase, 1, q, this.oneDot);
    return this.oneDot[0]! / Q;
  }

  /**
   * Folds a skill added after the build into the model (its terms' vectors; the SVD is not redone). A skill
   * holding no model term gets a zero vector, as in the build, so a restored model (which cannot tell the
   * two apart) holds what this one does.
   */
  add(slot: number): void {
    this.delete(slot);
    this.skills.set(slot, this.skillVector(slot) ?? new Int8Array(DIMS));
    this.ivf.place(slot);
  }

  /** Forgets a skill. */
  delete(slot: number): void {
    this.ivf.remove(slot);
    this.skills.delete(slot);
  }

  /**
   * The `depth` skills nearest a query vector among the PROBE clusters nearest it (approximate: a skill in
   * another cluster is missed), among the slots `admit` lets through.
   */
  nearest(q: Float32Array, depth: number, admit: (slot: number) => boolean): DenseHit[] {
    return this.ivf.nearest(q, depth, admit);
  }

  /** The sizes of the clusters `nearest` scans for a query vector (benchmarks count the work). */
  probedSizes(q: Float32Array): number[] {
    return this.ivf.probedSizes(q);
  }

  /** Estimated bytes: term vectors, skill vectors (DIMS bytes and a row each), clusters. */
  bytes(): number {
    return (
      this.termVectors.byteLength +
      this.termScale.byteLength +
      this.termIdf.byteLength +
      this.rows.size * 40 +
      this.skills.bytes() +
      this.kernel.bytes() +
      this.ivf.bytes()
    );
  }

  /** Figures for /metrics. */
  stats(): { terms: number; skills: number; clusters: number; bytes: number } {
    return {
      terms: this.rows.size,
      skills: this.skills.size,
      clusters: this.ivf.clusterCount,
      bytes: this.bytes(),
    };
  }
}
