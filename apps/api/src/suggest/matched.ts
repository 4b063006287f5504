/**
 * The words of a message a suggestion answers (SPEC 2.7: "the words or phrase of the message it answers"),
 * shown by the web page, the CLI and the MCP tool beside each suggestion.
 */

/**
 * Most words quoted. The stretch from the first to the last word a skill holds was most of a long message
 * (over the judged set's 1,048 suggestions: median 173 characters, 619 over 150), which tells a reader
 * nothing about why the skill was suggested; a phrase of this many words holds a request's object and verb
 * ("bails out at the first differing byte") and fits one line of a hook's small budget.
 */
export const MAX_QUOTED_WORDS = 12;

/** The end of the text is a letter and an apostrophe: a word after it ends a contraction ("we're"), not a quote. */
const CONTRACTED = /\p{L}['\u2019]$/u;
/** An apostrophe and the letters after it at the start of the text: the rest of a contraction ("couldn't"). */
const CONTRACTION_TAIL = /^['\u2019]\p{L}+/u;
/** A character inside one token of the message (a file name, a version, a path), beside its letters. */
const TOKEN_INNER = /[\p{L}\p{N}_.\-/@]/u;
/** A letter or digit: a quoted phrase starts and ends on one. */
const WORD_CHAR = /[\p{L}\p{N}]/u;
/** Between two words: a sentence or clause ends (the quoted phrase stays inside one). */
const SENTENCE_BREAK = /[.!?;](\s|$)|\n/;

interface Word {
  /** Lowercase, as need words are. */
  word: string;
  start: number;
  end: number;
  sentence: number;
  /** The word's weight when the skill holds it (its idf), else 0. */
  weight: number;
}

/**
 * The densest phrase of `text` a skill holds: the window of at most MAX_QUOTED_WORDS words within one
 * sentence whose distinct held words weigh most (`weightOf`: a lowercase word's weight when the skill holds
 * it, else 0), from its first held word to its last. Fewer words win a tie, then the earlier phrase. When
 * the skill holds no word (it came from related terms alone), the first words of the text.
 */
export function quotedPhrase(text: string, weightOf: (word: string) => number): string {
  const words: Word[] = [];
  let sentence = 0;
  let previousEnd = 0;
  for (const w of text.matchAll(/[\p{L}\p{N}]+/gu)) {
    if (words.length > 0 && SENTENCE_BREAK.test(text.slice(previousEnd, w.index))) sentence++;
    const word = w[0].toLowerCase();
    // The end of a contraction ("re" of "we're") is not a word of the message: a phrase starting there would
    // start inside a word.
    const contracted = CONTRACTED.test(text.slice(Math.max(0, w.index - 2), w.index));
    const end = w.index + w[0].length;
    words.push({ word, start: w.index, end, sentence, weight: contracted ? 0 : weightOf(word) });
    previousEnd = end;
  }
  let best: { from: number; to: number; weight: number } | null = null;
  for (let from = 0; from < words.length; from++) {
    if (words[from]!.weight <= 0) continue;
    const held = new Set<string>();
    let weight = 0;
    for (let to = from; to < words.length && to - from < MAX_QUOTED_WORDS; to++) {
      const w = words[to]!;
      if (w.sentence !== words[from]!.sentence) break;
      if (w.weight <= 0) continue;
      if (!held.has(w.word)) {
        held.add(w.word);
        weight += w.weight;
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
    return first.length > 0 ? tidy(text.slice(first[0]!.start, first[first.length - 1]!.end)) : text.trim();
  }
  // Whole tokens of the message: a file name or a version ("msa-2025.docx") is quoted whole, not from or to
  // one of its words.
  let start = words[best.from]!.start;
  while (start > 0 && TOKEN_INNER.test(text.charAt(start - 1))) start--;
  while (!WORD_CHAR.test(text.charAt(start))) start++;
  let end = words[best.to]!.end;
  while (end < text.length && TOKEN_INNER.test(text.charAt(end))) end++;
  while (!WORD_CHAR.test(text.charAt(end - 1))) end--;
  // A contraction ends with the word it contracts ("couldn't"), not before its apostrophe.
  const tail = CONTRACTION_TAIL.exec(text.slice(end))?.[0].length ?? 0;
  return tidy(text.slice(start, end + tail));
}

/**
 * One space between words (the message's own line breaks, and the gaps code and paths left, folded), and no
 * bracket the phrase does not both open and close (it was cut from a longer sentence).
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
    .replace(/\s+/g, ' ')
    .replace(/ ([,;:])/g, '$1')
    .trim();
}
