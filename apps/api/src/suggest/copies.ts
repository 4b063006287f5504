/**
 * Copies of one skill: the same SKILL.md published in several repositories (forks, vendored folders,
 * collections that gather others' skills). An agent shown two of them learns nothing from the second, and
 * in a suggestion's few slots (the hook's ~300 tokens) it takes the place of a skill that might help.
 */

/** What a copy is told apart by: what a suggestion shows of it, and what picks the copy to show. */
export interface CopyFacts {
  name: string;
  description: string;
  stars: number;
  flags: readonly { suppressedBy?: number | undefined }[];
}

/**
 * What makes two skills copies of one skill for a reader of suggestions: the same name and description,
 * the two things a suggestion shows (an agent cannot tell such results apart).
 */
export function copyKey(skill: { name: string; description: string }): string {
  // The name's length first: no name or description, whatever it holds, can pass for another split.
  return `${skill.name.length}:${skill.name}\u0000${skill.description}`;
}

/**
 * The candidates (best first) grouped by skill: each group holds one skill's copies, best first, and the
 * groups come in the order of their best copy. Compares names, then descriptions (no `copyKey` string is
 * built per candidate: this runs on every suggestion, and descriptions run to a thousand characters).
 */
export function copyGroups<T>(ranked: readonly T[], skillOf: (candidate: T) => CopyFacts): T[][] {
  const groups: T[][] = [];
  const byName = new Map<string, Map<string, T[]>>();
  for (const candidate of ranked) {
    const { name, description } = skillOf(candidate);
    let byDescription = byName.get(name);
    if (!byDescription) {
      byDescription = new Map();
      byName.set(name, byDescription);
    }
    const group = byDescription.get(description);
    if (group) group.push(candidate);
    else {
      const created = [candidate];
      byDescription.set(description, created);
      groups.push(created);
    }
  }
  return groups;
}

/** Open (unsuppressed) safety flags of a copy. */
const openFlags = (facts: CopyFacts) => facts.flags.filter((f) => f.suppressedBy === undefined).length;

/**
 * The copy of a skill to show (its copies best first): the one with the fewest open safety flags, then the
 * most stars, then the best ranked. Copies rank apart by accidents (the order of equal scores in a list, a
 * word added to a body), so the best-ranked copy would often be a fork; the most-starred one is usually
 * the original that forks copy, and a fork that added something a scanner flags never hides a clean copy.
 */
export function shownCopy<T>(copies: readonly T[], skillOf: (candidate: T) => CopyFacts): T {
  let shown = copies[0]!;
  let stars = skillOf(shown).stars;
  let flags = openFlags(skillOf(shown));
  for (let i = 1; i < copies.length; i++) {
    const other = skillOf(copies[i]!);
    const otherFlags = openFlags(other);
    if (otherFlags < flags || (otherFlags === flags && other.stars > stars)) {
      shown = copies[i]!;
      stars = other.stars;
      flags = otherFlags;
    }
  }
  return shown;
}
