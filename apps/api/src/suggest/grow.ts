/** The typed arrays the suggestion models keep per slot, row or cluster. */
type Growable = Int8Array | Uint8Array | Int32Array | Uint32Array | Float32Array | Float64Array;

/**
 * `array`, or a copy of it of the same kind that holds at least `size` elements (at least half as many
 * again, so adding one at a time copies a bounded number of times), the new ones set to `fill`. The one
 * place the models grow their flat arrays.
 */
export function grown<T extends Growable>(array: T, size: number, fill = 0): T {
  if (size <= array.length) return array;
  const make = array.constructor as new (length: number) => T;
  const next = new make(Math.max(size, Math.ceil(array.length * 1.5)));
  next.set(array);
  if (fill !== 0) next.fill(fill, array.length);
  return next;
}
