import { stemmer } from 'stemmer';
import { MAX_QUERY_WORDS, MAX_WORD_LENGTH, ONE_TYPO_FROM, TWO_TYPOS_FROM } from '../tuning.js';
import stopWordList from './stop-words.json' with { type: 'json' };
import synonymData from './synonyms.json' with { type: 'json' };

/** Words of a text: lowercased, NFKC-normalised runs of letters and digits. */
export function textWords(text: string): string[] {
  return (
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

/** Characters of a text read at a time by `leadingWords` (cut at the next ASCII whitespace). */
const LEADING_CHUNK = 2_048;
const ASCII_SPACE = /[ \t\n\r]/g;

/**
 * The first `limit` words of `textWords(text)`, normalising and matching only as much of the text as they
 * need (the suggestion model reads a skill's body up to its first 600 words; bodies run to thousands). The
 * text is read in pieces cut before ASCII whitespace, which NFKC never composes with and lowercasing never
 * looks across, so the words are the same.
 */
export function leadingWords(text: string, limit: number): string[] {
  if (text.length <= LEADING_CHUNK) {
    const all = textWords(text);
    return all.length > limit ? all.slice(0, limit) : all;
  }
  const words: string[] = [];
  let start = 0;
  while (start < text.length && words.length < limit) {
    let end = start + LEADING_CHUNK;
    if (end < text.length) {
      ASCII_SPACE.lastIndex = end;
      end = ASCII_SPACE.exec(text)?.index ?? text.length;
    } else end = text.length;
    for (const word of textWords(text.slice(start, end))) {
      if (words.length >= limit) break;
      words.push(word);
    }
    start = end;
  }
  return words;
}

/** A word's index term: its Porter stem for Latin-script words, the word itself otherwise. */
export function termOf(word: string): string {
  return /^[a-z]+$/.test(word) && word.length > 3 ? stemmer(word) : word;
}

/** A name as compared for "exact name first": lowercase, any run of separators is one hyphen. */
export function nameKey(text: string): string {
  return textWords(text).join('-');
}

/** Function words and request filler (data: stop-words.json). */
export const STOP_WORDS: ReadonlySet<string> = new Set(stopWordList.words);

/** One alternative of a synonym group: its words. */
type Phrase = readonly string[];

const SYNONYM_GROUPS: readonly (readonly Phrase[])[] = synonymData.groups.map((g) =>
  g.map((p) => textWords(p)),
);

/** Longest synonym phrase, in words. */
const MAX_PHRASE = Math.max(...SYNONYM_GROUPS.flat().map((p) => p.length));

const PHRASE_INDEX = new Map<string, number[]>();
SYNONYM_GROUPS.forEach((group, gi) => {
  for (const phrase of group) {
    const key = phrase.join(' ');
    PHRASE_INDEX.set(key, [...(PHRASE_INDEX.get(key) ?? []), gi]);
  }
});

/** A synonym found in a query: words [start, end) matched `phrase`, which means the same as `alternatives`. */
export interface SynonymMatch {
  start: number;
  end: number;
  alternatives: Phrase[];
}

/** Finds the synonym phrases of a query's words, longest first, left to right, without overlap. */
export function findSynonyms(words: readonly string[]): SynonymMatch[] {
  const out: SynonymMatch[] = [];
  let i = 0;
  while (i < words.length) {
    let matched = false;
    for (let len = Math.min(MAX_PHRASE, words.length - i); len >= 1; len--) {
      const key = words.slice(i, i + len).join(' ');
      const groups = PHRASE_INDEX.get(key);
      if (!groups) continue;
      const alternatives = groups.flatMap((gi) => SYNONYM_GROUPS[gi]!).filter((p) => p.join(' ') !== key);
      out.push({ start: i, end: i + len, alternatives });
      i += len;
      matched = true;
      break;
    }
    if (!matched) i++;
  }
  return out;
}

/**
 * Optimal-string-alignment distance (Levenshtein plus adjacent transpositions) of a and b, or
 * `max + 1` as soon as it must exceed `max`. Written here because the libraries at hand compute the full
 * distance without a cutoff or without transpositions ("desgin" is one typo of "design", not two).
 */
export function typoDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const n = b.length;
  // Three rows of scratch reused by every call (typo candidates are checked by the thousand per query).
  if (rowScratch.length < 3 * (n + 1)) rowScratch = new Int32Array(6 * (n + 1));
  let prev2 = 0;
  let prev = n + 1;
  let cur = 2 * (n + 1);
  const row = rowScratch;
  for (let j = 0; j <= n; j++) {
    row[prev2 + j] = 0;
    row[prev + j] = j;
    row[cur + j] = 0;
  }
  for (let i = 1; i <= a.length; i++) {
    row[cur] = i;
    let rowMin = i;
    for (let j = 1; j <= n; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      let v = Math.min(row[prev + j]! + 1, row[cur + j - 1]! + 1, row[prev + j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, row[prev2 + j - 2]! + 1);
      row[cur + j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    const t = prev2;
    prev2 = prev;
    prev = cur;
    cur = t;
  }
  return row[prev + n]!;
}

let rowScratch = new Int32Array(128);

/** Typos allowed in a word of this length (Meilisearch's defaults, plus one for 4-letter words unknown to the index). */
export function typoBudget(length: number): number {
  if (length >= TWO_TYPOS_FROM) return 2;
  if (length >= ONE_TYPO_FROM) return 1;
  return 0;
}

/** A query read without an index vocabulary (engines that correct typos themselves: Postgres, Meilisearch). */
export interface WordPlan {
  /** Words that matter, in query order (all of them when the query is only stop words). */
  words: string[];
  /** Synonym and abbreviation words of the query's phrases. */
  alternatives: string[];
  /** Stop words and words past the 16th. */
  ignored: string[];
}

/** Splits a query into the words that matter, their synonyms, and what is ignored. */
export function planWords(query: string): WordPlan {
  const all = textWords(query).filter((w) => w.length <= MAX_WORD_LENGTH);
  const words = all.slice(0, MAX_QUERY_WORDS);
  const ignored = all.slice(MAX_QUERY_WORDS);
  const allStop = words.every((w) => STOP_WORDS.has(w));
  const kept: string[] = [];
  for (const w of words) {
    if (!allStop && STOP_WORDS.has(w)) ignored.push(w);
    else kept.push(w);
  }
  const alternatives = [...new Set(findSynonyms(words).flatMap((m) => m.alternatives.flat()))].filter(
    (w) => !STOP_WORDS.has(w) && !kept.includes(w),
  );
  return { words: kept, alternatives, ignored };
}
