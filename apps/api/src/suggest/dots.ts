/**
 * The dot products of `q` with `count` rows of `q.length` coordinates of `v` (skills' int8 rows, centroids), row
 * k from `bases[k]`, into `out`. Each row's terms are added one at a time in order (the same sum to the last
 * bit whatever the grouping), four rows at once: four independent sums in flight, where one row at a time
 * waits on each addition (three times slower). It runs for every skill of the probed clusters and every
 * centroid, each request.
 */
export function dots(
  v: Int8Array | Float32Array,
  bases: Int32Array,
  count: number,
  q: Float32Array,
  out: Float64Array,
): void {
  const dims = q.length;
  let k = 0;
  for (; k + 3 < count; k += 4) {
    const b0 = bases[k]!;
    const b1 = bases[k + 1]!;
    const b2 = bases[k + 2]!;
    const b3 = bases[k + 3]!;
    let d0 = 0;
    let d1 = 0;
    let d2 = 0;
    let d3 = 0;
    for (let j = 0; j < dims; j++) {
      const x = q[j]!;
      d0 += v[b0 + j]! * x;
      d1 += v[b1 + j]! * x;
      d2 += v[b2 + j]! * x;
      d3 += v[b3 + j]! * x;
    }
    out[k] = d0;
    out[k + 1] = d1;
    out[k + 2] = d2;
    out[k + 3] = d3;
  }
  for (; k < count; k++) {
    const b = bases[k]!;
    let d = 0;
    for (let j = 0; j < dims; j++) d += v[b + j]! * q[j]!;
    out[k] = d;
  }
}
