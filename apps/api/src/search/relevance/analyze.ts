import { stemmer as russian } from '@orama/stemmers/russian';
import { stemmer } from 'stemmer';
import { remembered } from '../../runtime/remembered.js';
import { MAX_QUERY_WORDS, MAX_WORD_LENGTH, ONE_TYPO_FROM, TWO_TYPOS_FROM } from '../tuning.js';
import { koreanStems } from './korean-endings.js';
import stopWordList from './stop-words.json' with { type: 'json' };
import synonymData from './synonyms.json' with { type: 'json' };
import translationData from './translations.json' with { type: 'json' };
import { HIGH_CHARACTER, holdsUnspaced, simplifiedForm, splitRun } from './unspaced.js';

/**
 * A run of letters and digits, with the combining marks written on them: a word in a script written with
 * spaces between words. (NFKC composes Latin accents; Thai and Devanagari vowel signs stay marks, and a
 * word broke at each one: "नमस्ते" was three.)
 */
const WORD_RUN = /[\p{L}\p{N}][\p{L}\p{M}\p{N}]*/gu;

/** A word of a text and where it starts. */
export interface WordAt {
  word: string;
  index: number;
}

/**
 * The words of `text` as written (no normalising or lowercasing) with their indexes: runs of letters and
 * digits, the letters of unspaced scripts apart from the rest and split into words by ICU (a Hangul word
 * is already one: Korean is written with spaces).
 */
export function wordsAt(text: string): WordAt[] {
  const out: WordAt[] = [];
  for (const run of text.matchAll(WORD_RUN)) {
    if (!holdsUnspaced(run[0])) out.push({ word: run[0], index: run.index });
    else splitRun(run[0], (word, offset) => out.push({ word, index: run.index + offset }));
  }
  return out;
}

/**
 * Words of a text: lowercased, NFKC-normalised runs of letters and digits (and marks; unspaced scripts:
 * `wordsAt`, their Chinese characters in simplified form).
 */
export function textWords(text: string): string[] {
  const normal = text.normalize('NFKC').toLowerCase();
  const runs = normal.match(WORD_RUN);
  if (runs === null) return [];
  // Most texts hold no character past U+0E00 (emoji aside): their words are the runs.
  if (!HIGH_CHARACTER.test(normal)) return runs;
  let words: string[] | null = null;
  for (let i = 0; i < runs.length; i++) {
    const run = runs[i]!;
    if (!holdsUnspaced(run)) {
      words?.push(run);
      continue;
    }
    // The runs before the first that splits are words as they are.
    words ??= runs.slice(0, i);
    const into = words;
    splitRun(run, (word) => into.push(simplifiedForm(word)));
  }
  return words ?? runs;
}

const ASCII_ONLY = /^[\x00-\x7f]*$/;

/** A word of `wordsAt` as `textWords` reads it: NFKC-normalised, lowercased, Chinese in simplified form. */
export function readForm(written: string): string {
  // NFKC changes no ASCII word (most words a quote reads).
  if (ASCII_ONLY.test(written)) return written.toLowerCase();
  const normal = written.normalize('NFKC').toLowerCase();
  return HIGH_CHARACTER.test(normal) ? simplifiedForm(normal) : normal;
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

/** One Chinese character or kana alone. */
const LONE_HAN_OR_KANA = /^[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}]$/u;

/**
 * Whether a query word carries no meaning of its own: a stop word, or a Chinese character or kana ICU left
 * alone (a particle, or half of a compound its dictionary lacks: 文档 read as 文 and 档). In an index whose
 * Chinese skills are few, every Chinese character is rare, so one alone put those skills first for any
 * Chinese request ("把这个PDF转换成Word文档" led with a planning skill through 成, 文 and 档).
 */
export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word) || (word.length === 1 && LONE_HAN_OR_KANA.test(word));
}

/** One alternative of a synonym group: its words. */
type Phrase = readonly string[];

const SYNONYM_GROUPS: readonly (readonly Phrase[])[] = synonymData.groups.map((g) =>
  g.map((p) => textWords(p)),
);

const PHRASE_INDEX = new Map<string, number[]>();
SYNONYM_GROUPS.forEach((group, gi) => {
  for (const phrase of group) {
    const key = phrase.join(' ');
    PHRASE_INDEX.set(key, [...(PHRASE_INDEX.get(key) ?? []), gi]);
  }
});

/** Whether a word is written in Cyrillic (its first letter: U+0400 to U+04FF). */
const isCyrillic = (word: string) => {
  const c = word.charCodeAt(0);
  return c >= 0x0400 && c <= 0x04ff;
};

/** Whether a word may start a translated phrase: Chinese, Japanese or Korean (U+3000 and above), or Russian. */
const mayTranslate = (word: string) => word.charCodeAt(0) >= 0x3000 || isCyrillic(word);

/** Russian words whose stems are remembered (a request repeats its words). */
const RUSSIAN_STEMS_HELD = 8_192;

/**
 * A Russian word's stem: Russian declines its nouns and conjugates its verbs ("базы данных", "базу
 * данных"; "задеплой", "деплоить"), so the dictionary holds each word by its Snowball stem.
 */
const russianStem = remembered(russian, RUSSIAN_STEMS_HELD);

/** Words as the dictionary holds a phrase of them: run together, a Russian phrase's words by their stems. */
function runTogether(words: readonly string[]): string {
  return words.length > 0 && isCyrillic(words[0]!) ? words.map(russianStem).join('') : words.join('');
}

/**
 * The English phrases of each Chinese, Japanese, Korean or Russian phrase of `translations.json`, by its words. One way:
 * skills are written in English far more often than requests are, and an English request is read as
 * before (a group of synonyms would add Chinese terms to every English query's search).
 */
const TRANSLATIONS = new Map<string, Phrase[]>();
/** Most words the analyzer splits a translated phrase into. */
let MAX_TRANSLATED = 1;
for (const [english, phrases] of Object.entries(translationData.terms)) {
  const target = textWords(english);
  for (const phrase of phrases) {
    // By its words run together: how the phrase is written, however the analyzer splits it in a sentence
    // (a Russian word by its stem: it is declined).
    const words = textWords(phrase);
    MAX_TRANSLATED = Math.max(MAX_TRANSLATED, words.length);
    const key = runTogether(words);
    const had = TRANSLATIONS.get(key) ?? [];
    if (!had.some((p) => p.join(' ') === target.join(' '))) TRANSLATIONS.set(key, [...had, target]);
  }
}

/** Longest synonym phrase, in words. */
const MAX_PHRASE = Math.max(...SYNONYM_GROUPS.flat().map((p) => p.length));

/**
 * The verb stem of a Russian past participle's stem: the dictionary holds a verb by its infinitive's and
 * imperative's stems, and a participle of an -ить verb stems to that and "ен" ("смерженный" -> "смержен",
 * "смержить" -> "смерж"), with an "л" after a labial ("добавленный" -> "добавлен", "добавить" -> "добав").
 * Written by hand: Snowball stems inflections, not derivations, and no Russian morphology package is at hand.
 */
function participleVerbStem(stem: string): string | undefined {
  return (/^(.{3,}[бвмпф])лен$/.exec(stem) ?? /^(.{3,})ен$/.exec(stem))?.[1];
}

/**
 * The English phrases of a dictionary word (or words run together), a Korean word also through its stem
 * (its particle or verb ending taken off: korean-endings.ts), a Russian participle's stem through its
 * verb's. Every lookup goes through here: a query's words (findSynonyms), a phrase's (joinTranslatedPhrases)
 * and a suggestion's (translationsOf).
 */
function translated(key: string): Phrase[] | undefined {
  const direct = TRANSLATIONS.get(key);
  if (direct) return direct;
  for (const stem of koreanStems(key)) {
    const found = TRANSLATIONS.get(stem);
    if (found) return found;
  }
  const verb = isCyrillic(key) ? participleVerbStem(key) : undefined;
  return verb === undefined ? undefined : TRANSLATIONS.get(verb);
}

/** The English phrases a Chinese, Japanese, Korean or Russian word stands for (none for any other). */
export function translationsOf(word: string): readonly Phrase[] {
  return translated(word) ?? (isCyrillic(word) ? translated(russianStem(word)) : undefined) ?? NO_PHRASES;
}
const NO_PHRASES: readonly Phrase[] = [];

/**
 * The words with each run of them that spells a translated phrase made one word ("服务" and "器" as ICU
 * splits 服务器): a request's lone characters are no need of their own and are left out, so the phrase is
 * joined before they are. Longest first, left to right.
 */
export function joinTranslatedPhrases(words: readonly string[]): string[] {
  if (!words.some(mayTranslate)) return [...words];
  const out: string[] = [];
  let i = 0;
  while (i < words.length) {
    let joined = 1;
    if (mayTranslate(words[i]!)) {
      for (let len = Math.min(MAX_TRANSLATED, words.length - i); len >= 2; len--) {
        if (translated(runTogether(words.slice(i, i + len)))) {
          joined = len;
          break;
        }
      }
    }
    out.push(joined === 1 ? words[i]! : runTogether(words.slice(i, i + joined)));
    i += joined;
  }
  return out;
}

/** A synonym found in a query: words [start, end) matched `phrase`, which means the same as `alternatives`. */
export interface SynonymMatch {
  start: number;
  end: number;
  alternatives: Phrase[];
}

/**
 * Finds the synonym phrases of a query's words (and the English of its Chinese, Japanese or Korean ones), longest
 * first, left to right, without overlap.
 */
export function findSynonyms(words: readonly string[]): SynonymMatch[] {
  const out: SynonymMatch[] = [];
  let i = 0;
  while (i < words.length) {
    let matched = false;
    const translatable = mayTranslate(words[i]!);
    const longest = translatable ? Math.max(MAX_PHRASE, MAX_TRANSLATED) : MAX_PHRASE;
    for (let len = Math.min(longest, words.length - i); len >= 1; len--) {
      const key = words.slice(i, i + len).join(' ');
      const groups = PHRASE_INDEX.get(key);
      const english = translatable ? translated(runTogether(words.slice(i, i + len))) : undefined;
      if (!groups && !english) continue;
      const alternatives = (groups ?? [])
        .flatMap((gi) => SYNONYM_GROUPS[gi]!)
        .filter((p) => p.join(' ') !== key)
        .concat(english ?? []);
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
  /** Stop words and words past the 16th, each once, none of them searched. */
  ignored: string[];
}

/** Splits a query into the words that matter, their synonyms, and what is ignored. */
export function planWords(query: string): WordPlan {
  const all = textWords(query).filter((w) => w.length <= MAX_WORD_LENGTH);
  const words = all.slice(0, MAX_QUERY_WORDS);
  const ignored = all.slice(MAX_QUERY_WORDS);
  const allStop = words.every(isStopWord);
  const kept: string[] = [];
  for (const w of words) {
    if (!allStop && isStopWord(w)) ignored.push(w);
    else kept.push(w);
  }
  const alternatives = [...new Set(findSynonyms(words).flatMap((m) => m.alternatives.flat()))].filter(
    (w) => !isStopWord(w) && !kept.includes(w),
  );
  // Each word once, and not one that is searched: a repeated word past the 16th is searched all the same.
  const searched = new Set(kept);
  return { words: kept, alternatives, ignored: [...new Set(ignored)].filter((w) => !searched.has(w)) };
}
