import { termOf } from '../search/relevance/analyze.js';
import { isFiller } from './needs.js';

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

const contentTerms = new Map<string, string | null>();

/**
 * The term of a word that carries a need, null for a filler (`isFiller`): the filler test and
 * `cachedTermOf` in one lookup. Building the model asks it of every word it indexes, and the filler test
 * alone (two set lookups and a regular expression) was 2 s of a build at 54,061 skills.
 */
export function contentTermOf(word: string): string | null {
  let term = contentTerms.get(word);
  if (term === undefined) {
    if (contentTerms.size >= MAX_WORDS) contentTerms.clear();
    term = isFiller(word) ? null : cachedTermOf(word);
    contentTerms.set(word, term);
  }
  return term;
}
