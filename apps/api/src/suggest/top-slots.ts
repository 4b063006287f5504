/** A slot and its score. */
export interface SlotHit {
  slot: number;
  score: number;
}

const before = (a: SlotHit, b: SlotHit) => b.score - a.score || a.slot - b.slot;

/**
 * The `depth` best admitted slots, by score then slot: exactly that order, so the answer does not depend on
 * the order the candidates are listed in (ties are common: copies of one skill score the same). Written
 * here rather than taken from a heap library because it runs in the hot loop of every retrieval: a buffer
 * of twice the depth, cut back when full, keeps the common case to one comparison with the current floor,
 * and `admit` (visibility) runs only for candidates that could still make the cut.
 */
export function topSlots(
  slots: Iterable<number>,
  scoreOf: (slot: number) => number,
  depth: number,
  admit: (slot: number) => boolean,
): SlotHit[] {
  const hits: SlotHit[] = [];
  let floor: SlotHit | null = null;
  for (const slot of slots) {
    const score = scoreOf(slot);
    if (floor && (score < floor.score || (score === floor.score && slot > floor.slot))) continue;
    if (!admit(slot)) continue;
    hits.push({ slot, score });
    if (hits.length >= depth * 2) {
      hits.sort(before);
      hits.length = depth;
      floor = hits[depth - 1]!;
    }
  }
  hits.sort(before);
  return hits.slice(0, depth);
}

/**
 * topSlots over scores already computed: `scores[i]` is the score of `slots[i]`, for the first `count`.
 * The same answer, without a call per candidate: topSlots' scoring callback differs per retrieval, so that
 * call could not be inlined, and it ran for every skill a retrieval scored (tens of thousands a request).
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
