/**
 * The words of the field in a message written in Spanish, Portuguese, French, Italian or German, read as
 * their English (`translations.json`, `byLanguage`): skills are written in English, and such a request was
 * read through the few words it borrows from English ("SEO", "terraform"), so "haz una auditoría SEO ...:
 * investigación de palabras clave" met the SEO audit skill on one word of five. Unlike Chinese or Korean,
 * these languages are written in Latin letters and share words with English ("red" is Spanish for
 * network), so a word is read as English only in a message read as written in that language
 * (language.ts), never in a search query or an English message.
 */

import { stemmer as french } from '@orama/stemmers/french';
import { stemmer as german } from '@orama/stemmers/german';
import { stemmer as italian } from '@orama/stemmers/italian';
import { stemmer as portuguese } from '@orama/stemmers/portuguese';
import { stemmer as spanish } from '@orama/stemmers/spanish';
import { remembered } from '../runtime/remembered.js';
import { textWords } from '../search/relevance/analyze.js';
import translationData from '../search/relevance/translations.json' with { type: 'json' };

/**
 * Each language's Snowball stemmer (`stopword` codes, as language.ts reads them): "auditorías" and
 * "auditoría", "genera" and "generar" are one word to the dictionary.
 */
const STEMMERS: Record<string, (word: string) => string> = {
  spa: spanish,
  por: portuguese,
  fra: french,
  ita: italian,
  deu: german,
};

const COMBINING_MARKS = /\p{M}+/gu;

/** A word without its accents (a request may be typed without them). */
const unaccented = (word: string) => word.normalize('NFD').replace(COMBINING_MARKS, '');

/** A word as the dictionary compares it: the stem of the word without accents, without accents. */
function keyOf(stem: (word: string) => string, word: string): string {
  return unaccented(stem(unaccented(word)));
}

/** Per language: the English words of each phrase by its words' keys joined with spaces, and the longest phrase. */
interface Dictionary {
  english: Map<string, string[]>;
  longest: number;
  /** The first words' keys of the phrases of two words or more: no longer phrase is tried at another word. */
  phraseStarts: Set<string>;
  /** A message word's key, remembered (a message repeats its words; stemming one costs about a microsecond). */
  wordKey: (word: string) => string;
}

/** Keys remembered per language. */
const KEYS_HELD = 8_192;

const dictionaries = new Map<string, Dictionary>();
for (const [code, terms] of Object.entries(translationData.byLanguage)) {
  const stem = STEMMERS[code];
  if (!stem) continue;
  const english = new Map<string, string[]>();
  const phraseStarts = new Set<string>();
  let longest = 1;
  for (const [word, phrases] of Object.entries(terms)) {
    for (const phrase of phrases) {
      const keys = textWords(phrase).map((w) => keyOf(stem, w));
      longest = Math.max(longest, keys.length);
      if (keys.length > 1) phraseStarts.add(keys[0]!);
      const key = keys.join(' ');
      english.set(key, [...new Set([...(english.get(key) ?? []), ...textWords(word)])]);
    }
  }
  const wordKey = remembered((word) => keyOf(stem, word), KEYS_HELD);
  dictionaries.set(code, { english, longest, phraseStarts, wordKey });
}

/** A message's words with its words of the field read as English, and what each such word was read as. */
export interface EnglishReading {
  words: string[];
  /** Each word of the message read as English (function words of a phrase aside): its English words. */
  readAs: Map<string, string[]>;
}

/**
 * A message's `words` (textWords) with the words of the field of `languages` (the languages language.ts
 * read it as) replaced by their English, longest phrase first; `functionWords`, the language's, are no
 * word of the field alone. A language without a dictionary, or none, leaves the words as they are.
 */
export function intoEnglish(
  words: readonly string[],
  languages: readonly string[],
  functionWords: ReadonlySet<string>,
): EnglishReading {
  const readAs = new Map<string, string[]>();
  const dictionary = languages.map((code) => dictionaries.get(code)).find((d) => d !== undefined);
  if (!dictionary) return { words: [...words], readAs };
  const keys = words.map((w) => dictionary.wordKey(w));
  const out: string[] = [];
  let i = 0;
  while (i < words.length) {
    let read = 0;
    const most = dictionary.phraseStarts.has(keys[i]!) ? Math.min(dictionary.longest, words.length - i) : 1;
    for (let len = most; len >= 1 && read === 0; len--) {
      if (len === 1 && functionWords.has(words[i]!)) break;
      const english = dictionary.english.get(keys.slice(i, i + len).join(' '));
      if (!english) continue;
      out.push(...english);
      for (const w of words.slice(i, i + len)) if (!functionWords.has(w)) readAs.set(w, english);
      read = len;
    }
    if (read === 0) {
      out.push(words[i]!);
      read = 1;
    }
    i += read;
  }
  return { words: out, readAs };
}
