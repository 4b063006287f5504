import { describe, expect, it } from 'vitest';
import { TimeSlicer } from '../runtime/time-slice.js';
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

  it.each([
    ['in one step', Number.POSITIVE_INFINITY],
    ['letting the event loop run at every slot', 0],
  ])(
    'renumbers rows in a given order, keeping each slot its vector and leaving no row free (%s)',
    async (_, sliceMs) => {
      const rows = new VectorRows(2);
      for (let slot = 0; slot < 6; slot++) rows.set(slot, [slot, 10 - slot]);
      rows.delete(2);
      const slice = new TimeSlicer(sliceMs);
      await rows.reorder([5, 3, 42, 5, 1], slice);
      expect(slice.pauses).toBe(sliceMs === 0 ? 5 + 6 : 0);
      expect([5, 3, 1].map((slot) => rows.row(slot))).toEqual([0, 1, 2]);
      // The held slots not listed follow, in their former row order; the deleted one stays deleted.
      expect([0, 4].map((slot) => rows.row(slot))).toEqual([3, 4]);
      expect(rows.row(2)).toBe(-1);
      for (const slot of [0, 1, 3, 4, 5]) expect([...rows.get(slot)!]).toEqual([slot, 10 - slot]);
      expect(rows.slotAt(0)).toBe(5);
      expect(rows.size).toBe(5);
      // No row was left free: a new slot takes the next one.
      rows.set(7, [7, -7]);
      expect(rows.row(7)).toBe(5);
    },
  );
});
