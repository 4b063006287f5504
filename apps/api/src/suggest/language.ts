/**
 * The function words of a message written in another language than English. The hub's stop words are
 * English, so in a Spanish message "de", "la", "con", "las" were telling words (few skills hold them:
 * those written in Spanish) and Spanish requests were answered with the one Spanish skill of the shared
 * corpus whatever they asked (scores 0.29-0.55, over the prompt hook's floor), a French one with a German
 * skill through "des". A message whose words are more another language's function words than English ones
 * is read as that language, and its function words carry no need.
 */
import stopword from 'stopword';
import { STOP_WORDS } from '../search/relevance/analyze.js';

/**
 * The languages read, with the `stopword` package's lists (Chinese, Japanese and Thai as ICU splits them
 * into words: analyze.ts; the particles written after a Korean word stay part of it, but not after a
 * Latin one: "pdf를").
 */
const LANGUAGES = [
  'spa',
  'por',
  'fra',
  'ita',
  'deu',
  'nld',
  'swe',
  'dan',
  'nob',
  'fin',
  'pol',
  'ces',
  'ron',
  'hun',
  'tur',
  'ind',
  'vie',
  'rus',
  'zho',
  'jpn',
  'kor',
  'tha',
] as const;

/** English function words: the search's English stop words and the package's English list. */
const ENGLISH = new Set([...[...STOP_WORDS].filter((w) => /^[a-z']+$/.test(w)), ...stopword.eng]);

/** Each language's function words. */
const WORDS = LANGUAGES.map((code) => new Set(stopword[code]));

/** For each function word of another language that is no English one, the languages it is one of (bits). */
const LANGUAGES_OF = new Map<string, number>();
WORDS.forEach((words, i) => {
  for (const w of words) if (!ENGLISH.has(w)) LANGUAGES_OF.set(w, (LANGUAGES_OF.get(w) ?? 0) | (1 << i));
});

/** Fewest function words of another language a message must hold to be read as written in it. */
const MIN_FOREIGN = 2;

/** How a message's language was read: the function words to set aside, and the languages they are of. */
export interface ForeignReading {
  functionWords: ReadonlySet<string>;
  /** The `stopword` codes of the languages read (several when tied); none for English. */
  languages: readonly string[];
}

/**
 * The function words to set aside in a message of lowercase `words`: those of the language whose own
 * function words it holds most, when it holds at least two and more of them than English function words
 * (languages tied for most: each one's); none for an English message, or one too short to tell. One map
 * lookup a word: 8,000 characters of a stranger's text cost what their need finding does.
 */
export function foreignFunctionWords(words: readonly string[]): ForeignReading {
  let english = 0;
  const counts = new Array<number>(LANGUAGES.length).fill(0);
  for (const w of words) {
    if (ENGLISH.has(w)) english++;
    const bits = LANGUAGES_OF.get(w);
    if (bits === undefined) continue;
    for (let i = 0; i < LANGUAGES.length; i++) if ((bits & (1 << i)) !== 0) counts[i] = counts[i]! + 1;
  }
  const most = Math.max(...counts);
  if (most < MIN_FOREIGN || most <= english) return ENGLISH_READING;
  const functionWords = new Set<string>();
  const languages: string[] = [];
  counts.forEach((n, i) => {
    if (n !== most) return;
    languages.push(LANGUAGES[i]!);
    for (const w of WORDS[i]!) functionWords.add(w);
  });
  return { functionWords, languages };
}

const ENGLISH_READING: ForeignReading = { functionWords: new Set(), languages: [] };
