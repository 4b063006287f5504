import { describe, expect, it } from 'vitest';
import { dots } from './dots.js';

describe('dots', () => {
  it('gives each row the sum of adding its terms one at a time, to the last bit', () => {
    let seed = 11;
    const random = () => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    const dims = 128;
    const skills = Int8Array.from({ length: 40 * dims }, () => Math.round(random() * 254 - 127));
    const centroids = Float32Array.from(
      { length: 9 * dims },
      () => (random() - 0.5) * 2 ** -Math.floor(random() * 40),
    );
    for (const [v, rows] of [
      [skills, 40],
      [centroids, 9],
    ] as const) {
      // Coordinates of many magnitudes: sums that round differently when added in another order.
      const q = Float32Array.from({ length: dims }, () => (random() - 0.5) * 2 ** -Math.floor(random() * 40));
      // Rows in any order, a count that leaves a remainder after the groups of four.
      for (const count of [1, 3, 4, 7, rows]) {
        const bases = Int32Array.from({ length: count }, () => Math.floor(random() * rows) * dims);
        const out = new Float64Array(count);
        dots(v, bases, count, q, out);
        for (let k = 0; k < count; k++) {
          let plain = 0;
          for (let j = 0; j < dims; j++) plain += v[bases[k]! + j]! * q[j]!;
          expect(out[k]).toBe(plain);
        }
      }
    }
  });
});
