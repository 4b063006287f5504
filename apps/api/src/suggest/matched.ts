/**
 * The words of a message a suggestion answers (SPEC 2.7: "the words or phrase of the message it answers"),
 * shown by the web page, the CLI and the MCP tool beside each suggestion.
 */

import { readForm, wordsAt } from '../search/relevance/analyze.js';
import { UNSPACED_LETTER } from '../search/relevance/unspaced.js';

/**
 * Most words quoted. The stretch from the first to the last word a skill holds was most of a long message
 * (over the judged set's 1,048 suggestions: median 173 characters, 619 over 150), which tells a reader
 * nothing about why the skill was suggested; a phrase of this many words holds a request's object and verb
 * ("bails out at the first differing byte") and fits one line of a hook's small budget.
 */
export const MAX_QUOTED_WORDS = 12;

/** A letter and then an apostrophe before a word: the word ends a contraction ("we're"), it is not quoted. */
const APOSTROPHE = /['\u2019]/;
const LETTER = /\p{L}/u;
/** An apostrophe and the letters after it at the start of the text: the rest of a contraction ("couldn't"). */
const CONTRACTION_TAIL = /^['\u2019]\p{L}+/u;
/** A character inside one token of the message (a file name, a version, a path), beside its letters. */
const TOKEN_INNER = /[\p{L}\p{N}_.\-/@]/u;
/** A letter or digit: a quoted phrase starts and ends on one. */
const WORD_CHAR = /[\p{L}\p{N}]/u;

/** Where a text need finding read came from: the message, and for each character of the text its index there. */
export interface QuoteSource {
  message: string;
  at: ArrayLike<number>;
}

/** Longest phrase quoted from the message itself (see `phrase`). */
const MAX_QUOTED_CHARS = 240;

/** A quoted phrase and the weight of the distinct held words in it (0 when the skill holds none). */
export interface Quote {
  phrase: string;
  weight: number;
}

/** Quotes the phrase of one text a skill answers, given the weight of each word the skill holds. */
export type PhraseQuoter = (weightOf: (word: string) => number) => Quote;

interface Word {
  /** Index of the word (lowercase, as need words are) among the text's distinct words. */
  id: number;
  start: number;
  end: number;
  sentence: number;
  /**
   * The end of a contraction ("re" of "we're"): not a word of the message, and a phrase starting there would
   * start inside a word.
   */
  contracted: boolean;
}

/**
 * Quotes, for each skill it is given, the densest phrase of `text` the skill holds: the window of at most
 * MAX_QUOTED_WORDS words within one sentence whose distinct held words weigh most (`weightOf`: a word's weight, the
 * word as `readForm` reads it, when the skill holds it, else 0), from its first held word to its last, with that weight.
 * Fewer words win a tie, then the earlier phrase. When the skill holds no word (it came from related terms alone), the first
 * words of the text. The text is split into words once, however many skills quote it (a request quotes up
 * to `limit` skills against a message of up to 8,000 characters), and `weightOf` is asked once per distinct word.
 * `source` is the message and, for each character of `text`, its index there: the phrase is quoted from the
 * message itself, in the user's characters, and a sentence ends where the message's own text between two
 * words ends one (a code block need finding set aside does).
 */
export function phraseQuoter(text: string, source: QuoteSource): PhraseQuoter {
  const words: Word[] = [];
  const distinct: string[] = [];
  const ids = new Map<string, number>();
  let sentence = 0;
  let previousEnd = 0;
  // The words need finding reads (analyze.ts textWords), where they are in the text.
  for (const w of wordsAt(text)) {
    if (
      words.length > 0 &&
      breaksSentence(source.message, source.at[previousEnd - 1]! + 1, source.at[w.index]!)
    )
      sentence++;
    const word = readForm(w.word);
    let id = ids.get(word);
    if (id === undefined) {
      id = distinct.push(word) - 1;
      ids.set(word, id);
    }
    const end = w.index + w.word.length;
    words.push({
      id,
      start: w.index,
      end,
      sentence,
      contracted: APOSTROPHE.test(text.charAt(w.index - 1)) && LETTER.test(text.charAt(w.index - 2)),
    });
    previousEnd = end;
  }
  const weights = new Float64Array(distinct.length);
  const counted = new Int32Array(distinct.length);
  return (weightOf) => {
    for (let d = 0; d < distinct.length; d++) weights[d] = weightOf(distinct[d]!);
    counted.fill(-1);
    return quote(text, words, weights, counted, source);
  };
}

/**
 * The phrase of `text` whose distinct held words (`weights[id]` > 0) weigh most (see `phraseQuoter`);
 * `counted[id]` is scratch: the window start that last counted the word.
 */
function quote(
  text: string,
  words: readonly Word[],
  weights: Float64Array,
  counted: Int32Array,
  source: QuoteSource,
): Quote {
  const weightAt = (i: number) => (words[i]!.contracted ? 0 : weights[words[i]!.id]!);
  let best: { from: number; to: number; weight: number } | null = null;
  for (let from = 0; from < words.length; from++) {
    if (weightAt(from) <= 0) continue;
    let weight = 0;
    for (let to = from; to < words.length && to - from < MAX_QUOTED_WORDS; to++) {
      const w = words[to]!;
      if (w.sentence !== words[from]!.sentence) break;
      const held = weightAt(to);
      if (held <= 0) continue;
      if (counted[w.id] !== from) {
        counted[w.id] = from;
        weight += held;
      }
      const better =
        !best ||
        weight > best.weight + 1e-9 ||
        (Math.abs(weight - best.weight) <= 1e-9 && to - from < best.to - best.from);
      if (better) best = { from, to, weight };
    }
  }
  if (!best) {
    const first = words.filter((w) => w.sentence === 0).slice(0, MAX_QUOTED_WORDS);
    return {
      phrase:
        first.length > 0 ? phrase(text, first[0]!.start, first[first.length - 1]!.end, source) : text.trim(),
      weight: 0,
    };
  }
  return { phrase: phrase(text, words[best.from]!.start, words[best.to]!.end, source), weight: best.weight };
}

/** Characters `start` to `end` of `text` as quoted: from the message, whole tokens, tidied. */
function phrase(text: string, start: number, end: number, source: QuoteSource): string {
  let from = text;
  const messageStart = source.at[start]!;
  const messageEnd = source.at[end - 1]! + 1;
  // What need finding set aside inside the phrase (a URL, a long inline code) comes back with it; past this
  // the phrase would be mostly that, and the text need finding read is quoted instead.
  if (messageEnd - messageStart <= MAX_QUOTED_CHARS) {
    from = source.message;
    start = messageStart;
    end = messageEnd;
  }
  // Whole tokens of the message: a file name or a version ("msa-2025.docx") is quoted whole, not from or to
  // one of its words. A word of a script written without spaces is a token of its own (a Chinese clause
  // is one run of letters).
  const inToken = (at: number) => TOKEN_INNER.test(from.charAt(at)) && !UNSPACED_LETTER.test(from.charAt(at));
  if (!UNSPACED_LETTER.test(from.charAt(start))) while (start > 0 && inToken(start - 1)) start--;
  while (!WORD_CHAR.test(from.charAt(start))) start++;
  if (!UNSPACED_LETTER.test(from.charAt(end - 1))) while (end < from.length && inToken(end)) end++;
  while (!WORD_CHAR.test(from.charAt(end - 1))) end--;
  // A contraction ends with the word it contracts ("couldn't"), not before its apostrophe.
  const tail = CONTRACTION_TAIL.exec(from.slice(end))?.[0].length ?? 0;
  return tidy(from.slice(start, end + tail));
}

/**
 * Whether a sentence or clause ends between two words (`text` from `from` to `to`): a line break, or one of
 * . ! ? ; before white space. The quoted phrase stays inside one. A loop over the characters, not a regular
 * expression over a slice: it runs between every two words of messages up to 8,000 characters.
 */
function breaksSentence(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) return true;
    if ((c === 46 || c === 33 || c === 63 || c === 59) && i + 1 < to && /\s/.test(text.charAt(i + 1)))
      return true;
    // 。！？； end a Chinese or Japanese sentence with no space after them.
    if (c === 0x3002 || c === 0xff01 || c === 0xff1f || c === 0xff1b) return true;
  }
  return false;
}

/**
 * One space between words (the message's own line breaks, and the gaps code and paths left, folded), no
 * bracket the phrase does not both open and close (it was cut from a longer sentence), and no backticks (a
 * phrase is quoted as plain text: `git push --force` reads as git push --force).
 */
function tidy(phrase: string): string {
  const unmatched = new Set<number>();
  const open: number[] = [];
  for (let i = 0; i < phrase.length; i++) {
    if (phrase[i] === '(') open.push(i);
    else if (phrase[i] === ')' && open.pop() === undefined) unmatched.add(i);
  }
  for (const i of open) unmatched.add(i);
  let kept = '';
  for (let i = 0; i < phrase.length; i++) if (!unmatched.has(i)) kept += phrase[i];
  return kept
    .replace(/`/g, '')
    .replace(/\s+/g, ' ')
    .replace(/ ([,;:])/g, '$1')
    .trim();
}
