import { grown } from './grow.js';

/** A slot and its score. */
export interface SlotHit {
  slot: number;
  score: number;
}

const before = (a: SlotHit, b: SlotHit) => b.score - a.score || a.slot - b.slot;

/** The heap's scratch (grown to the largest depth asked; the function is synchronous, so one suffices). */
let heapScores = new Float64Array(64);
let heapSlots = new Uint32Array(64);

/**
 * The `depth` best admitted slots among the first `count` of `slots` (`scores[i]` is the score of
 * `slots[i]`), by score then slot: exactly that order, so the answer does not depend on the order the
 * candidates are listed in (ties are common: copies of one skill score the same). Written here rather than
 * taken from a heap library because it runs in the hot loop of every retrieval (about 11,000 candidates a
 * call at 54,061 skills): a binary heap of the `depth` best so far in two typed arrays, its root the worst
 * of them, so most candidates cost one comparison with the root and an insertion log2(depth) steps; `admit`
 * (visibility) runs only for candidates that would enter. Scores come precomputed, not from a callback: a
 * callback that differs per retrieval could not be inlined. (A buffer of twice the depth sorted with a
 * comparator when full took 3.7 times as long on random scores and 3.1 times on ascending ones.)
 */
export function topScoredSlots(
  slots: Uint32Array,
  scores: Float64Array,
  count: number,
  depth: number,
  admit: (slot: number) => boolean,
): SlotHit[] {
  if (depth <= 0) return [];
  heapScores = grown(heapScores, depth);
  heapSlots = grown(heapSlots, depth);
  const hs = heapScores;
  const hl = heapSlots;
  let size = 0;
  let i = 0;
  // Filling: every admitted candidate enters, sifted up while its parent is better than it.
  for (; i < count && size < depth; i++) {
    const score = scores[i]!;
    const slot = slots[i]!;
    if (!admit(slot)) continue;
    let k = size++;
    while (k > 0) {
      const parent = (k - 1) >> 1;
      const ps = hs[parent]!;
      if (ps < score || (ps === score && hl[parent]! > slot)) break;
      hs[k] = ps;
      hl[k] = hl[parent]!;
      k = parent;
    }
    hs[k] = score;
    hl[k] = slot;
  }
  // Full: a candidate not better than the worst kept (a lower score, or the same score and a higher slot)
  // is skipped; one that is replaces the root and sinks below every child worse than it.
  let rootScore = hs[0]!;
  let rootSlot = hl[0]!;
  for (; i < count; i++) {
    const score = scores[i]!;
    if (score < rootScore) continue;
    const slot = slots[i]!;
    if ((score === rootScore && slot > rootSlot) || !admit(slot)) continue;
    let k = 0;
    for (;;) {
      const left = 2 * k + 1;
      if (left >= size) break;
      let child = left;
      const right = left + 1;
      if (right < size) {
        const ls = hs[left]!;
        const rs = hs[right]!;
        if (rs < ls || (rs === ls && hl[right]! > hl[left]!)) child = right;
      }
      const cs = hs[child]!;
      if (cs > score || (cs === score && hl[child]! < slot)) break;
      hs[k] = cs;
      hl[k] = hl[child]!;
      k = child;
    }
    hs[k] = score;
    hl[k] = slot;
    rootScore = hs[0]!;
    rootSlot = hl[0]!;
  }
  const hits: SlotHit[] = new Array(size);
  for (let i = 0; i < size; i++) hits[i] = { slot: hl[i]!, score: hs[i]! };
  return hits.sort(before);
}
