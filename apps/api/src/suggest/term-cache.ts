import { termOf } from '../search/relevance/analyze.js';

/** Distinct words remembered; past it the cache starts over (bounds its memory to a few MiB). */
const MAX_WORDS = 100_000;
const terms = new Map<string, string>();

/**
 * termOf, remembered: the Porter stemmer runs a dozen regular expressions a word, and building the model
 * stems every word of 57,000 skills (about 45 million words, a few hundred thousand distinct) while a
 * suggestion stems its need words several times over. Same answers as termOf.
 */
export function cachedTermOf(word: string): string {
  let term = terms.get(word);
  if (term === undefined) {
    if (terms.size >= MAX_WORDS) terms.clear();
    term = termOf(word);
    terms.set(word, term);
  }
  return term;
}
