/**
 * Look-alike protection: a new collection whose full name (`namespace/collection`) is a small edit away from
 * a popular public collection of another namespace, or reads the same once common confusables are folded,
 * gets a warning, because that is how typo-squatting starts.
 */

/** Optimal-string-alignment distance (Levenshtein plus adjacent transpositions), stopping past `max`. */
export function editDistance(a: string, b: string, max = Number.POSITIVE_INFINITY): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prevPrev: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(
        (prev[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (prev[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, (prevPrev[j - 2] as number) + 1);
      }
      row.push(value);
      best = Math.min(best, value);
    }
    if (best > max) return max + 1;
    prevPrev = prev;
    prev = row;
  }
  return prev[b.length] as number;
}

/** Folds characters that read alike (0/o, 1/l/i, rn/m, vv/w) and drops separators. */
export function skeleton(name: string): string {
  return name
    .toLowerCase()
    .replace(/rn/g, 'm')
    .replace(/vv/g, 'w')
    .replace(/0/g, 'o')
    .replace(/[1i|]/g, 'l')
    .replace(/5/g, 's')
    .replace(/[-_.]/g, '');
}

/** How many edits still count as look-alike for a name of this length (short names collide by chance). */
export function lookalikeThreshold(length: number): number {
  if (length < 6) return 0;
  if (length < 12) return 1;
  return 2;
}

/** The candidates `fullName` (namespace/collection) looks like, closest first. */
export function findLookalikes(
  fullName: string,
  candidates: readonly { namespace: string; name: string; popularity: number }[],
): { fullName: string; distance: number; popularity: number }[] {
  const max = lookalikeThreshold(fullName.length);
  const mine = skeleton(fullName);
  const hits: { fullName: string; distance: number; popularity: number }[] = [];
  for (const c of candidates) {
    const theirs = `${c.namespace}/${c.name}`;
    if (theirs === fullName) continue;
    const distance = editDistance(fullName, theirs, max);
    if (distance <= max || skeleton(theirs) === mine)
      hits.push({ fullName: theirs, distance, popularity: c.popularity });
  }
  return hits.sort((a, b) => a.distance - b.distance || b.popularity - a.popularity);
}
