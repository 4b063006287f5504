import { TimeSlicer } from '../runtime/time-slice.js';
import { grown } from './grow.js';

/** The element types rows are kept in: int8 (the LSA model's quantised vectors) or float32 (a service's). */
type Values = Int8Array | Float32Array;

/**
 * Where the flat array of rows lives and how it grows: a plain typed array (`grown`) by default, the
 * int8 kernel's WebAssembly memory for the LSA model (int8-dots.ts).
 */
export interface RowStorage<T extends Values> {
  make(length: number): T;
  /** `data`, or an array holding at least `length` elements that starts with it. */
  grow(data: T, length: number): T;
}

/** Rows in plain typed arrays of `make`'s kind. */
export function plainStorage<T extends Values>(make: (length: number) => T): RowStorage<T> {
  return { make, grow: (data, length) => grown(data, length) };
}

/**
 * Fixed-length vectors by slot, in one flat array: a row per held slot, the rows of forgotten slots
 * reused, so memory follows the skills held and not the slots ever used (slots are never reused). Written
 * for the nearest-skill scans (the LSA model's, the embedding service's): a Map of small arrays cost a
 * lookup and a pointer chase per skill scanned, and about 100 bytes of bookkeeping per skill.
 */
export class VectorRows<T extends Values = Int8Array> {
  private data: T;
  /** Per slot, its row + 1 (0: none). */
  private rowOf = new Int32Array(0);
  /** Per row, its slot + 1 (0: a free row). */
  private slotOf = new Int32Array(0);
  private readonly free: number[] = [];
  private used = 0;
  private count = 0;

  constructor(
    private readonly dims: number,
    capacity = 0,
    private readonly storage: RowStorage<T> = plainStorage((length) => new Int8Array(length) as T),
  ) {
    this.data = storage.make(capacity * dims);
  }

  /** Makes room for `rows` vectors and slots below `slots` at once (a build knows both). */
  reserve(rows: number, slots: number): void {
    this.data = this.storage.grow(this.data, rows * this.dims);
    this.rowOf = grown(this.rowOf, slots);
    this.slotOf = grown(this.slotOf, rows);
  }

  /** Slots held. */
  get size(): number {
    return this.count;
  }

  /** The row of a slot, or -1. */
  row(slot: number): number {
    return slot < this.rowOf.length ? this.rowOf[slot]! - 1 : -1;
  }

  /** Rows in use or freed (`slotAt` tells them apart). */
  get rows(): number {
    return this.used;
  }

  /** The slot a row holds, or -1 for a free row. */
  slotAt(row: number): number {
    return this.slotOf[row]! - 1;
  }

  /** The flat array the rows live in (row r at r * dims); valid until the next `set`. */
  get values(): T {
    return this.data;
  }

  /** The vector of a slot (a view, valid until the next `set`), or undefined. */
  get(slot: number): T | undefined {
    const r = this.row(slot);
    return r < 0 ? undefined : (this.data.subarray(r * this.dims, (r + 1) * this.dims) as T);
  }

  /** Stores a slot's vector. */
  set(slot: number, vector: ArrayLike<number>): void {
    let r = this.row(slot);
    if (r < 0) {
      r = this.free.pop() ?? this.used++;
      this.data = this.storage.grow(this.data, (r + 1) * this.dims);
      this.rowOf = grown(this.rowOf, slot + 1);
      this.rowOf[slot] = r + 1;
      this.slotOf = grown(this.slotOf, r + 1);
      this.slotOf[r] = slot + 1;
      this.count++;
    }
    this.data.set(vector, r * this.dims);
  }

  /**
   * Renumbers the rows: the held slots of `order` take rows 0, 1, 2... in that order, the other held slots
   * the rows after them, and no row is left free. A scan that reads slots in `order` then reads memory in
   * one run instead of jumping between rows laid out in the order skills arrived. It lets the event loop
   * run when `slice` is due (about 200 ms at 54,000 skills), so it is for rows nobody reads meanwhile: a
   * model being built, before it serves.
   */
  async reorder(order: Iterable<number>, slice = new TimeSlicer(Number.POSITIVE_INFINITY)): Promise<void> {
    const dims = this.dims;
    const old = this.data.slice(0, this.used * dims) as T;
    const oldRowOf = this.rowOf.slice();
    const oldSlotOf = this.slotOf.slice(0, this.used);
    this.rowOf.fill(0);
    this.slotOf.fill(0);
    this.free.length = 0;
    let next = 0;
    const put = (slot: number) => {
      const from = oldRowOf[slot]! - 1;
      this.data.set(old.subarray(from * dims, (from + 1) * dims), next * dims);
      this.rowOf[slot] = next + 1;
      this.slotOf[next] = slot + 1;
      next++;
    };
    for (const slot of order) {
      if (slice.due()) await slice.pause();
      if (slot < oldRowOf.length && oldRowOf[slot]! > 0 && this.rowOf[slot] === 0) put(slot);
    }
    for (const plusOne of oldSlotOf) {
      if (slice.due()) await slice.pause();
      if (plusOne > 0 && this.rowOf[plusOne - 1] === 0) put(plusOne - 1);
    }
    this.used = next;
  }

  /** Forgets a slot's vector (its row is reused). */
  delete(slot: number): void {
    const r = this.row(slot);
    if (r < 0) return;
    this.rowOf[slot] = 0;
    this.slotOf[r] = 0;
    this.free.push(r);
    this.count--;
  }

  /** Bytes held. */
  bytes(): number {
    return this.data.byteLength + this.rowOf.byteLength + this.slotOf.byteLength + this.free.length * 8;
  }
}
