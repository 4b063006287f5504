import type { TimeSlicer } from '../runtime/time-slice.js';
import { dots } from './dots.js';
import { grown } from './grow.js';
import { stableHash } from './stable-hash.js';
import { type SlotHit, topScoredSlots } from './top-slots.js';
import type { VectorRows } from './vector-rows.js';

/** The slots of one cluster, and how many of `slots` are in use. */
interface ClusterList {
  slots: Uint32Array;
  length: number;
}

/** K-means iterations, and the vectors sampled to place the centroids. */
const KMEANS_ITERATIONS = 8;
const KMEANS_SAMPLE = 10_000;

/**
 * An inverted file over unit vectors held in `VectorRows` (the LSA model's int8 rows, an embedding service's
 * float32 rows): spherical k-means clusters (about sqrt(N)), every vector in its nearest cluster, and a query
 * scanning only the `probe` clusters nearest it, so a request reads about probe/sqrt(N) of the vectors.
 * Written here rather than taken from a library: the vectors stay in the rows the models already hold (no
 * second copy), skills join and leave one at a time as the index changes, and the scan is the models' own
 * four-at-once dot product. Approximate: a vector in a cluster not probed is missed.
 */
export class InvertedFile<T extends Int8Array | Float32Array> {
  private centroids = new Float32Array(0);
  /** The slots of each cluster (in no particular order: the nearest are picked by score then slot). */
  private clusters: ClusterList[] = [];
  /** Per row of the vectors: its cluster (-1: none) and its position in the cluster's list. */
  private clusterOfRow = new Int32Array(0);
  private positionOfRow = new Int32Array(0);
  /** Scratch of `nearest`: the slots of the clusters it scans, their rows' offsets, their scores. */
  private probedSlots = new Uint32Array(0);
  private probedBases = new Int32Array(0);
  private probedScores = new Float64Array(0);
  private centroidBases = new Int32Array(0);
  private centroidDots = new Float64Array(0);
  /** Scratch of `nearestCluster`: an int8 vector as float32 (what `dots` takes). */
  private readonly asFloat: Float32Array;

  /**
   * `unit`: what a coordinate of 1 is stored as (127 for the int8 rows, 1 for float32 ones); `probe`: the
   * clusters a query scans; `scan`: the dot products of the rows with a query (the int8 kernel's for rows
   * in its memory).
   */
  constructor(
    private readonly vectors: VectorRows<T>,
    private readonly dims: number,
    private readonly unit: number,
    private readonly probe: number,
    private readonly scan: typeof dots = dots,
  ) {
    this.asFloat = new Float32Array(dims);
  }

  /** Clusters held (0 before `build`, or over no vectors). */
  get clusterCount(): number {
    return this.clusters.length;
  }

  /**
   * Clusters `slots`' vectors afresh (about sqrt(N) clusters), in `slice`s (seconds of work at 57,000
   * skills). Queries must wait for it: the clusters are rebuilt in place. `keyOf` names a slot's skill
   * (its name and description: copies share them): the centroids start at the skills whose keys hash
   * lowest, and k-means learns from the KMEANS_SAMPLE lowest, so a skill added or removed moves them by
   * itself alone. (Started at random places, one skill removed moved every later place, and every cluster
   * with it.)
   */
  async build(
    slots: readonly number[],
    keyOf: (slot: number) => string,
    slice: TimeSlicer,
    trainOn: readonly number[] = slots,
  ): Promise<void> {
    const dims = this.dims;
    this.clusterOfRow = new Int32Array(slots.length).fill(-1);
    this.positionOfRow = new Int32Array(slots.length);
    if (slots.length === 0) {
      this.centroids = new Float32Array(0);
      this.clusters = [];
      return;
    }
    if (trainOn.length === 0) {
      // Nothing to draw clusters around (a hub of private skills alone): one cluster, scanned whole.
      this.centroids = new Float32Array(dims);
      await this.assign(slots, slice);
      return;
    }
    // Sized and drawn from `trainOn` alone (public skills): the other slots are only placed in them.
    const count = Math.max(1, Math.round(Math.sqrt(trainOn.length)));
    // One vector per skill (copies are the same vector), the lowest hashes first.
    const byHash = new Map<string, { slot: number; hash: number }>();
    for (const slot of trainOn) {
      const key = keyOf(slot);
      if (!byHash.has(key)) byHash.set(key, { slot, hash: stableHash(key) });
    }
    const ordered = [...byHash].sort(
      ([ka, a], [kb, b]) => a.hash - b.hash || (ka < kb ? -1 : ka > kb ? 1 : 0),
    );
    const sample: T[] = ordered.slice(0, KMEANS_SAMPLE).map(([, s]) => this.vectors.get(s.slot)!);
    const centroids = new Float32Array(count * dims);
    for (let c = 0; c < count; c++) {
      // Fewer distinct skills than clusters (copies): the extra clusters start on the same vectors.
      const v = sample[c % sample.length]!;
      for (let j = 0; j < dims; j++) centroids[c * dims + j] = v[j]! / this.unit;
    }
    this.centroids = centroids;
    for (let it = 0; it < KMEANS_ITERATIONS; it++) {
      const sums = new Float64Array(count * dims);
      for (const v of sample) {
        if (slice.due()) await slice.pause();
        const c = this.nearestCluster(v);
        for (let j = 0; j < dims; j++) sums[c * dims + j]! += v[j]!;
      }
      for (let c = 0; c < count; c++) {
        let norm = 0;
        for (let j = 0; j < dims; j++) norm += sums[c * dims + j]! ** 2;
        if (norm === 0) continue;
        norm = Math.sqrt(norm);
        for (let j = 0; j < dims; j++) centroids[c * dims + j] = sums[c * dims + j]! / norm;
      }
    }
    await this.assign(slots, slice);
  }

  /** The centroids, one after the other (a copy: what a snapshot keeps of the clusters). */
  centroidValues(): Float32Array {
    return this.centroids.slice();
  }

  /**
   * The clusters of `slots`' vectors around these centroids (`centroidValues` of an earlier build): each
   * vector's cluster is its nearest centroid, as after `build`, so the same centroids and vectors give the
   * same clusters whatever order skills came and left in.
   */
  async restore(slots: readonly number[], centroids: Float32Array, slice: TimeSlicer): Promise<void> {
    this.clusterOfRow = new Int32Array(slots.length).fill(-1);
    this.positionOfRow = new Int32Array(slots.length);
    this.centroids = centroids.slice();
    await this.assign(slots, slice);
  }

  /** Places `slots` in the nearest of the current centroids' clusters, then lays the rows out cluster by cluster. */
  private async assign(slots: readonly number[], slice: TimeSlicer): Promise<void> {
    const count = this.centroids.length / this.dims;
    this.clusters = Array.from({ length: count }, () => ({ slots: new Uint32Array(16), length: 0 }));
    for (const slot of slots) {
      if (slice.due()) await slice.pause();
      this.place(slot);
    }
    // Rows in cluster order: a probed cluster's rows are then read in one run, not picked out of the whole
    // array (the scan was waiting on memory more than computing). Skills placed later go where rows are free.
    await this.vectors.reorder(this.clusterOrder(), slice);
    this.clusterOfRow.fill(-1);
    this.clusters.forEach((list, c) => {
      for (let at = 0; at < list.length; at++) {
        const r = this.vectors.row(list.slots[at]!);
        this.clusterOfRow[r] = c;
        this.positionOfRow[r] = at;
      }
    });
  }

  /** Every clustered slot, cluster by cluster. */
  private *clusterOrder(): Generator<number> {
    for (const list of this.clusters) for (let at = 0; at < list.length; at++) yield list.slots[at]!;
  }

  /**
   * The cluster whose centroid is nearest `v` (the first on a tie). Every vector is placed by it, and the
   * sample's every k-means iteration: the centroids' dot products go through `dots`, four at a time, as a
   * query's do (one sum at a time waited on each addition: the clustering took 7.2 s of the model's build
   * at 54,061 skills, 2.7 s since). Int8 coordinates are exact in float32, and each sum adds the same
   * products in the same order, so the clusters are those of one dot product at a time, bit for bit.
   */
  private nearestCluster(v: T): number {
    const count = this.centroids.length / this.dims;
    let query: Float32Array;
    if (v instanceof Float32Array) query = v;
    else {
      this.asFloat.set(v);
      query = this.asFloat;
    }
    this.centroidDotsOf(query, count);
    const scores = this.centroidDots;
    let best = 0;
    let bestDot = Number.NEGATIVE_INFINITY;
    for (let c = 0; c < count; c++) {
      const dot = scores[c]!;
      if (dot > bestDot) {
        bestDot = dot;
        best = c;
      }
    }
    return best;
  }

  /** The dot products of a query with the first `count` centroids, into `centroidDots`. */
  private centroidDotsOf(q: Float32Array, count: number): void {
    if (this.centroidBases.length !== count) {
      this.centroidBases = Int32Array.from({ length: count }, (_, c) => c * this.dims);
      this.centroidDots = new Float64Array(count);
    }
    dots(this.centroids, this.centroidBases, count, q, this.centroidDots);
  }

  /** Puts a slot whose vector is held into its nearest cluster (nothing before the first `build`). */
  place(slot: number): void {
    const v = this.vectors.get(slot);
    if (!v || this.clusters.length === 0) return;
    const c = this.nearestCluster(v);
    const list = this.clusters[c]!;
    list.slots = grown(list.slots, list.length + 1);
    const r = this.vectors.row(slot);
    this.clusterOfRow = grown(this.clusterOfRow, r + 1, -1);
    this.positionOfRow = grown(this.positionOfRow, r + 1);
    this.clusterOfRow[r] = c;
    this.positionOfRow[r] = list.length;
    list.slots[list.length++] = slot;
  }

  /** Takes a slot out of its cluster; call it before its vector is deleted from the rows. */
  remove(slot: number): void {
    const r = this.vectors.row(slot);
    if (r < 0) return;
    const c = r < this.clusterOfRow.length ? this.clusterOfRow[r]! : -1;
    if (c < 0) return;
    // The cluster's last slot takes the place of the one leaving.
    const list = this.clusters[c]!;
    const at = this.positionOfRow[r]!;
    const last = list.slots[--list.length]!;
    if (at < list.length) {
      list.slots[at] = last;
      this.positionOfRow[this.vectors.row(last)] = at;
    }
    this.clusterOfRow[r] = -1;
  }

  /** The `depth` slots nearest a unit query vector among the `probe` clusters nearest it, that `admit` lets through. */
  nearest(q: Float32Array, depth: number, admit: (slot: number) => boolean): SlotHit[] {
    const probed = this.probedClusters(q);
    let n = 0;
    for (const list of probed) n += list.length;
    if (this.probedSlots.length < n) {
      const size = Math.max(n, this.probedSlots.length * 2);
      this.probedSlots = new Uint32Array(size);
      this.probedBases = new Int32Array(size);
      this.probedScores = new Float64Array(size);
    }
    const slots = this.probedSlots;
    n = 0;
    for (const list of probed) {
      slots.set(list.slots.subarray(0, list.length), n);
      n += list.length;
    }
    // A clustered slot always has a vector (`place`, `remove`); one without would score 0.
    const bases = this.probedBases;
    const missing: number[] = [];
    for (let i = 0; i < n; i++) {
      const r = this.vectors.row(slots[i]!);
      if (r < 0) missing.push(i);
      bases[i] = r < 0 ? 0 : r * this.dims;
    }
    const scores = this.probedScores;
    this.scan(this.vectors.values, bases, n, q, scores);
    if (this.unit !== 1) for (let i = 0; i < n; i++) scores[i] = scores[i]! / this.unit;
    for (const i of missing) scores[i] = 0;
    return topScoredSlots(slots, scores, n, depth, admit);
  }

  /** The sizes of the clusters a query vector would scan, nearest first (benchmarks count the work). */
  probedSizes(q: Float32Array): number[] {
    return this.probedClusters(q).map((list) => list.length);
  }

  /** The `probe` clusters whose centroids are nearest a query vector, nearest first. */
  private probedClusters(q: Float32Array): ClusterList[] {
    const count = this.clusters.length;
    this.centroidDotsOf(q, count);
    const byCluster: { c: number; dot: number }[] = [];
    for (let c = 0; c < count; c++) byCluster.push({ c, dot: this.centroidDots[c]! });
    byCluster.sort((a, b) => b.dot - a.dot);
    return byCluster.slice(0, this.probe).map(({ c }) => this.clusters[c]!);
  }

  /** Bytes held (not counting the vectors). */
  bytes(): number {
    return (
      this.clusterOfRow.byteLength +
      this.positionOfRow.byteLength +
      this.clusters.reduce((sum, list) => sum + list.slots.byteLength + 48, 0) +
      this.centroids.byteLength +
      this.probedSlots.byteLength +
      this.probedBases.byteLength +
      this.probedScores.byteLength
    );
  }
}
