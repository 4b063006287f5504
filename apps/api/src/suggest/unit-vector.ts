/** `v` divided by its length in place, or null when it is all zeros (the LSA model's and an embedding service's vectors). */
export function toUnit(v: Float32Array): Float32Array | null {
  let norm = 0;
  for (let j = 0; j < v.length; j++) norm += v[j]! * v[j]!;
  norm = Math.sqrt(norm);
  if (norm === 0) return null;
  for (let j = 0; j < v.length; j++) v[j]! /= norm;
  return v;
}
