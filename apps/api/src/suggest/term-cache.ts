import { remembered } from '../runtime/remembered.js';
import { termOf } from '../search/relevance/analyze.js';
import { isFiller } from './needs.js';

/** Distinct words remembered; past it the cache starts over (bounds its memory to a few MiB). */
const MAX_WORDS = 100_000;

/**
 * termOf, remembered: the Porter stemmer runs a dozen regular expressions a word, and building the model
 * stems every word of 57,000 skills (about 45 million words, a few hundred thousand distinct) while a
 * suggestion stems its need words several times over. Same answers as termOf.
 */
export const cachedTermOf: (word: string) => string = remembered(termOf, MAX_WORDS);

/**
 * The term of a word that carries a need, null for a filler (`isFiller`): the filler test and
 * `cachedTermOf` in one lookup. Building the model asks it of every word it indexes, and the filler test
 * alone (two set lookups and a regular expression) was 2 s of a build at 54,061 skills.
 */
export const contentTermOf: (word: string) => string | null = remembered(
  (word) => (isFiller(word) ? null : cachedTermOf(word)),
  MAX_WORDS,
);
