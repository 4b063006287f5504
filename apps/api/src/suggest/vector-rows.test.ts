import { describe, expect, it } from 'vitest';
import { VectorRows } from './vector-rows.js';

describe('VectorRows', () => {
  it('keeps each slot its vector, reuses the rows of forgotten slots, and grows past its reservation', () => {
    const rows = new VectorRows(3);
    rows.reserve(2, 2);
    rows.set(0, [1, 2, 3]);
    rows.set(1, [4, 5, 6]);
    rows.set(7, [7, 8, 9]);
    expect(rows.size).toBe(3);
    expect([...rows.get(1)!]).toEqual([4, 5, 6]);
    expect([...rows.get(7)!]).toEqual([7, 8, 9]);
    rows.delete(1);
    expect(rows.get(1)).toBeUndefined();
    expect(rows.row(1)).toBe(-1);
    // A new slot takes the freed row, and the others keep theirs.
    rows.set(9, [-1, -2, -3]);
    expect(rows.row(9)).toBe(1);
    expect([...rows.get(0)!]).toEqual([1, 2, 3]);
    expect([...rows.get(9)!]).toEqual([-1, -2, -3]);
    // Setting a held slot again overwrites its row.
    rows.set(0, [0, 0, 1]);
    expect(rows.row(0)).toBe(0);
    expect([...rows.values.subarray(0, 3)]).toEqual([0, 0, 1]);
    expect(rows.size).toBe(3);
  });
});
