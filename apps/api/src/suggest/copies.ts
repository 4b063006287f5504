/**
 * Copies of one skill: the same SKILL.md published in several repositories (forks, vendored folders,
 * collections that gather others' skills). An agent shown two of them learns nothing from the second, and
 * in a suggestion's few slots (the hook's ~300 tokens) it takes the place of a skill that might help.
 */

/**
 * What makes two skills copies of one skill for a reader of suggestions: the same name and description,
 * the two things a suggestion shows (an agent cannot tell such results apart).
 */
export function copyKey(skill: { name: string; description: string }): string {
  return `${skill.name}\u0000${skill.description}`;
}

/**
 * The candidates (best first) without later copies of an earlier one: each skill once, at its best copy.
 * Compares names, then descriptions (no `copyKey` string is built per candidate: this runs on every
 * suggestion, and descriptions run to a thousand characters).
 */
export function withoutCopies<T>(
  ranked: readonly T[],
  skillOf: (candidate: T) => { name: string; description: string },
): T[] {
  const seen = new Map<string, Set<string>>();
  return ranked.filter((candidate) => {
    const { name, description } = skillOf(candidate);
    let descriptions = seen.get(name);
    if (!descriptions) {
      descriptions = new Set();
      seen.set(name, descriptions);
    } else if (descriptions.has(description)) return false;
    descriptions.add(description);
    return true;
  });
}
