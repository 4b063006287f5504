import { describe, expect, it } from 'vitest';
import { type SlotHit, topScoredSlots } from './top-slots.js';

/** The plain answer: every admitted slot sorted by score then slot, cut to the depth. */
function sortedAll(
  slots: Uint32Array,
  scores: Float64Array,
  depth: number,
  admit: (slot: number) => boolean,
): SlotHit[] {
  return [...slots]
    .map((slot, i) => ({ slot, score: scores[i]! }))
    .filter((h) => admit(h.slot))
    .sort((a, b) => b.score - a.score || a.slot - b.slot)
    .slice(0, depth);
}

describe('topScoredSlots', () => {
  it('answers as sorting every admitted slot does: best by score then slot, whatever the order given', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    for (let round = 0; round < 20; round++) {
      const count = 50 + Math.floor(random() * 400);
      const slots = new Uint32Array(count);
      const scores = new Float64Array(count);
      for (let i = 0; i < count; i++) {
        slots[i] = i * 3 + Math.floor(random() * 3);
        // Few distinct scores: many ties, broken by slot.
        scores[i] = Math.floor(random() * 20) / 4;
      }
      // Shuffled: the answer must not depend on the order.
      for (let i = count - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [slots[i], slots[j]] = [slots[j]!, slots[i]!];
        [scores[i], scores[j]] = [scores[j]!, scores[i]!];
      }
      const admit = (slot: number) => slot % 5 !== 0;
      const depth = 10 + (round % 3) * 20;
      const expected = sortedAll(slots, scores, depth, admit);
      expect(topScoredSlots(slots, scores, count, depth, admit)).toEqual(expected);
      expect(expected.every((h) => admit(h.slot))).toBe(true);
      expect(expected.length).toBe(Math.min(depth, [...slots].filter(admit).length));
    }
  });

  it('answers the same for scores given in ascending or descending order, a depth of one or past the count, and nothing admitted', () => {
    const count = 300;
    const slots = Uint32Array.from({ length: count }, (_, i) => (i * 7919) % 1009);
    const scores = Float64Array.from({ length: count }, (_, i) => Math.floor(i / 3) / 2);
    const reversed = (a: Uint32Array | Float64Array) => a.slice().reverse();
    const admit = (slot: number) => slot % 4 !== 1;
    for (const depth of [1, 2, 17, 50, count, count + 5]) {
      const expected = sortedAll(slots, scores, depth, admit);
      expect(topScoredSlots(slots, scores, count, depth, admit)).toEqual(expected);
      expect(
        topScoredSlots(reversed(slots) as Uint32Array, reversed(scores) as Float64Array, count, depth, admit),
      ).toEqual(expected);
    }
    expect(topScoredSlots(slots, scores, count, 10, () => false)).toEqual([]);
    expect(topScoredSlots(slots, scores, count, 0, admit)).toEqual([]);
    expect(topScoredSlots(slots, scores, 0, 10, admit)).toEqual([]);
  });
});
