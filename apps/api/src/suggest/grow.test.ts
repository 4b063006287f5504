import { describe, expect, it } from 'vitest';
import { grown } from './grow.js';

describe('grown', () => {
  it('keeps the array when it is large enough, else copies it into a larger one of the same kind', () => {
    const small = Int32Array.of(4, 5, 6);
    expect(grown(small, 3)).toBe(small);
    const larger = grown(small, 4, -1);
    expect(larger).toBeInstanceOf(Int32Array);
    // Half as many again at least (5 of 3), the new elements filled.
    expect([...larger]).toEqual([4, 5, 6, -1, -1]);
    expect([...grown(Uint32Array.of(1), 10)]).toEqual([1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(grown(new Int8Array(0), 2)).toBeInstanceOf(Int8Array);
  });
});
