/** Reciprocal-rank fusion's constant: ranks past the first few weigh almost alike (Cormack et al., 2009). */
export const RRF_K = 60;

/** A ranked list of candidates by key, best first, with the list's weight in the fusion. */
export interface RankedList {
  keys: readonly string[];
  weight: number;
}

/**
 * Reciprocal-rank fusion: each list adds weight / (RRF_K + rank) to each of its keys. Ranks alone are
 * fused, so lists whose scores are on different scales (a search engine's, the model's, cosines) combine.
 */
export function reciprocalRankFusion(lists: readonly RankedList[]): Map<string, number> {
  const fused = new Map<string, number>();
  for (const list of lists) {
    list.keys.forEach((key, rank) => {
      fused.set(key, (fused.get(key) ?? 0) + list.weight / (RRF_K + rank + 1));
    });
  }
  return fused;
}

/** A reranked candidate: its key, ranking score, and per need of the message how well it covers it. */
export interface Ranked {
  key: string;
  rank: number;
  /** Coverage of each part of a multi-need message (same order as the parts). */
  parts: readonly number[];
}

/** The reranker's order: higher rank first, ties by key (so equal scores always come out alike). */
export const byRank = (a: Ranked, b: Ranked): number => b.rank - a.rank || (a.key < b.key ? -1 : 1);

/**
 * Orders candidates so each need of the message is covered near the top: the best candidate first, then,
 * while some need has no candidate covering it (coverage >= `covers`) among those picked, the best one
 * covering that need; the rest by rank. With one need this is the ranking as it is.
 */
export function diversify<T extends Ranked>(ranked: readonly T[], needs: number, covers: number): T[] {
  const sorted = [...ranked].sort(byRank);
  if (needs < 2 || sorted.length === 0) return sorted;
  const out: T[] = [sorted[0]!];
  const used = new Set<T>(out);
  const covered = new Set<number>();
  const mark = (c: T) => {
    c.parts.forEach((p, i) => {
      if (p >= covers) covered.add(i);
    });
  };
  mark(sorted[0]!);
  for (let need = 0; need < needs; need++) {
    if (covered.has(need)) continue;
    const best = sorted.find((c) => !used.has(c) && (c.parts[need] ?? 0) >= covers);
    if (!best) continue;
    out.push(best);
    used.add(best);
    mark(best);
  }
  for (const c of sorted) if (!used.has(c)) out.push(c);
  return out;
}
