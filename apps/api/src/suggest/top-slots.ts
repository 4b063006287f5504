/** A slot and its score. */
export interface SlotHit {
  slot: number;
  score: number;
}

const before = (a: SlotHit, b: SlotHit) => b.score - a.score || a.slot - b.slot;

/**
 * The `depth` best admitted slots among the first `count` of `slots` (`scores[i]` is the score of
 * `slots[i]`), by score then slot: exactly that order, so the answer does not depend on the order the
 * candidates are listed in (ties are common: copies of one skill score the same). Written here rather than
 * taken from a heap library because it runs in the hot loop of every retrieval: a buffer of twice the depth,
 * cut back when full, keeps the common case to one comparison with the current floor, and `admit`
 * (visibility) runs only for candidates that could still make the cut. Scores come precomputed, not from a
 * callback: a callback that differs per retrieval could not be inlined, and it ran for every skill a
 * retrieval scored (tens of thousands a request).
 */
export function topScoredSlots(
  slots: Uint32Array,
  scores: Float64Array,
  count: number,
  depth: number,
  admit: (slot: number) => boolean,
): SlotHit[] {
  const hits: SlotHit[] = [];
  let full = false;
  let floorScore = 0;
  let floorSlot = 0;
  for (let i = 0; i < count; i++) {
    const score = scores[i]!;
    const slot = slots[i]!;
    if (full && (score < floorScore || (score === floorScore && slot > floorSlot))) continue;
    if (!admit(slot)) continue;
    hits.push({ slot, score });
    if (hits.length >= depth * 2) {
      hits.sort(before);
      hits.length = depth;
      const floor = hits[depth - 1]!;
      floorScore = floor.score;
      floorSlot = floor.slot;
      full = true;
    }
  }
  hits.sort(before);
  return hits.slice(0, depth);
}
