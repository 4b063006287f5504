import { dots } from './dots.js';
import { INT8_DOTS_WASM } from './int8-dots.wasm.js';
import type { RowStorage } from './vector-rows.js';

/** The kernel's memory: a query of up to MAX_DIMS int16, then CHUNK row offsets and sums, then the rows. */
const MAX_DIMS = 1024;
const Q_AT = 0;
const CHUNK = 4096;
const BASES_AT = Q_AT + MAX_DIMS * 2;
const SUMS_AT = BASES_AT + CHUNK * 4;
const PAGE = 65_536;
const ROWS_AT = PAGE;
/** What the query's largest coordinate is stored as (int16). */
const Q_UNIT = 32_767;

let compiled: WebAssembly.Module | undefined;

type DotsKernel = (rows: number, bases: number, count: number, q: number, dims: number, out: number) => void;

/**
 * Int8 rows held in a WebAssembly memory, and their dot products with a query in WebAssembly SIMD
 * (int8-dots.wat): the LSA model's nearest-skill scan, which reads thousands of rows a request. The dot
 * products alone ran about nine times faster than the four-rows-at-once JavaScript loop on rows already in
 * cache; with the first 50 picked, over rows fetched from the whole array, 2.3 times
 * (`npm run bench -- suggest-vectors --int8`).
 * The query is rounded to int16 on the scale of its largest coordinate, so a sum differs from the exact
 * one by about 1e-4 of a cosine (the int8 rows themselves are rounded 40 times coarser); the integer sums
 * are exact, so copies of one skill still tie. Written here, not taken from a package: no maintained
 * package scans int8 rows held in a Node process's own memory, and the kernel is thirty lines of WAT.
 * One kernel serves one `VectorRows` (its storage).
 */
export class Int8DotKernel {
  private readonly memory: WebAssembly.Memory;
  private readonly run: DotsKernel;
  /** Views of the scratch, made again when growing the memory detaches them. */
  private viewed: ArrayBuffer | null = null;
  private q16 = new Int16Array(0);
  private bases32 = new Int32Array(0);
  private sums32 = new Int32Array(0);
  /** Bytes of the rows' view (what `VectorRows` counts as its own). */
  private rowBytes = 0;

  constructor() {
    compiled ??= new WebAssembly.Module(Buffer.from(INT8_DOTS_WASM, 'base64'));
    const instance = new WebAssembly.Instance(compiled, {});
    this.memory = instance.exports.memory as WebAssembly.Memory;
    this.run = instance.exports.dots as DotsKernel;
  }

  /** Rows in this kernel's memory: growing keeps them in place (no copy). */
  readonly storage: RowStorage<Int8Array> = {
    make: (length) => this.rows(length),
    grow: (data, length) =>
      length <= data.length ? data : this.rows(Math.max(length, Math.ceil(data.length * 1.5))),
  };

  private rows(length: number): Int8Array {
    const needed = ROWS_AT + length;
    const have = this.memory.buffer.byteLength;
    if (needed > have) this.memory.grow(Math.ceil((needed - have) / PAGE));
    this.rowBytes = length;
    return new Int8Array(this.memory.buffer, ROWS_AT, length);
  }

  /** Bytes of the kernel's memory besides the rows: the scratch page and the rest of the last page. */
  bytes(): number {
    return this.memory.buffer.byteLength - this.rowBytes;
  }

  /**
   * `dots` (dots.ts) over this kernel's rows: out[k] = the dot product of q with the row at `bases[k]`.
   * Rows held elsewhere, or a query whose length is not a multiple of 16, take the JavaScript loop.
   */
  readonly dots = (
    values: Int8Array | Float32Array,
    bases: Int32Array,
    count: number,
    q: Float32Array,
    out: Float64Array,
  ): void => {
    const dims = q.length;
    if (values.buffer !== this.memory.buffer || dims % 16 !== 0 || dims > MAX_DIMS) {
      dots(values, bases, count, q, out);
      return;
    }
    if (this.viewed !== this.memory.buffer) {
      const buffer = this.memory.buffer;
      this.q16 = new Int16Array(buffer, Q_AT, MAX_DIMS);
      this.bases32 = new Int32Array(buffer, BASES_AT, CHUNK);
      this.sums32 = new Int32Array(buffer, SUMS_AT, CHUNK);
      this.viewed = buffer;
    }
    let max = 0;
    for (let j = 0; j < dims; j++) max = Math.max(max, Math.abs(q[j]!));
    if (max === 0) {
      out.fill(0, 0, count);
      return;
    }
    const scale = Q_UNIT / max;
    for (let j = 0; j < dims; j++) this.q16[j] = Math.round(q[j]! * scale);
    for (let from = 0; from < count; from += CHUNK) {
      const n = Math.min(CHUNK, count - from);
      this.bases32.set(bases.subarray(from, from + n));
      this.run(ROWS_AT, BASES_AT, n, Q_AT, dims, SUMS_AT);
      for (let i = 0; i < n; i++) out[from + i] = this.sums32[i]! / scale;
    }
  };
}
