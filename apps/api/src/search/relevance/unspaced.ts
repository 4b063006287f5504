/**
 * Words of the scripts written without spaces between them (Chinese, Japanese, Thai, Lao, Khmer, Burmese),
 * and of the runs of letters that mix them with others: what `textWords` and `wordsAt` (analyze.ts) do
 * with a run of letters that holds one of their letters.
 */

import * as OpenCC from 'opencc-js/t2cn';
import { remembered } from '../../runtime/remembered.js';

/**
 * Letters of the scripts written without spaces between words (Chinese, Japanese, Thai, Lao, Khmer,
 * Burmese), and Hangul: a run of the first is a clause, not a word ("帮我规划这个项目" was one word, so no
 * skill ever matched a Chinese request), and each is glued to the Latin words written beside it
 * ("把这个pdf转换成word", "pdf를"). Script extensions: the Katakana prolonged sound mark "ー" is in both
 * kana scripts.
 */
const UNSPACED_SCRIPTS = String.raw`\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}\p{scx=Thai}\p{scx=Lao}\p{scx=Khmer}\p{scx=Myanmar}`;
export const UNSPACED_LETTER = new RegExp(`[${UNSPACED_SCRIPTS}]`, 'u');
/** A run's pieces: its letters of unspaced scripts apart from the rest. */
const SCRIPT_PIECE = new RegExp(`[${UNSPACED_SCRIPTS}]+|[^${UNSPACED_SCRIPTS}]+`, 'gu');
const HANGUL_ONLY = /^\p{scx=Hangul}+$/u;
/** A character at U+0E00 or above (or half of a surrogate pair): every unspaced letter is one. */
export const HIGH_CHARACTER = /[\u0e00-\uffff]/;
/**
 * ICU's word segmentation, the one Node ships: a dictionary for Chinese and Japanese and one for each
 * Southeast Asian script. No npm segmenter does better without a download, and this one is the rule
 * Meilisearch and browsers follow too. It is the same for every locale for these scripts.
 */
const SEGMENTER = new Intl.Segmenter('und', { granularity: 'word' });

/**
 * Whether a run of letters holds a letter of an unspaced script: one comparison a character for the
 * runs of other scripts (all of them below U+0E00 but Vietnamese, Greek extended and a few more), where a
 * regular expression with script properties costs a call a run.
 */
export function holdsUnspaced(run: string): boolean {
  for (let i = 0; i < run.length; i++) if (run.charCodeAt(i) >= 0x0e00) return UNSPACED_LETTER.test(run);
  return false;
}

/**
 * Most unspaced letters ICU segments at once. Its dictionary costs more a character the longer the stretch
 * (8,000 Chinese characters without punctuation: 9 ms at once, 3 ms in pieces of 64); written Chinese and
 * Japanese put punctuation every few dozen characters, so only a stretch no one writes is cut, at the risk
 * of one word at each cut.
 */
const SEGMENT_CHUNK = 128;
/**
 * Stretches remembered: a message's clauses are split into words several times (its needs, its task
 * signal, the phrases quoted), and the skills of a language share most of theirs.
 */
const SEGMENTED_HELD = 8_192;

/**
 * Where the words of a stretch of unspaced letters (at most SEGMENT_CHUNK) are, as ICU splits them (start
 * and end offsets, in pairs); remembered.
 */
const wordBounds = remembered((stretch: string): Uint8Array => {
  const found: number[] = [];
  for (const s of SEGMENTER.segment(stretch))
    if (s.isWordLike) found.push(s.index, s.index + s.segment.length);
  return Uint8Array.from(found);
}, SEGMENTED_HELD);

/**
 * A piece's katakana runs apart from its other letters. A run of katakana is one word: Japanese writes
 * loanwords in it, and ICU's dictionary, missing most of them, cut each into letters ("ベストプラクティス"
 * came out as ベスト, プ, ラ, ク, テ, ィ, ス, and "リファクタリング" as リ, ファクタ, リング): the rule Japanese
 * analyzers keep for the katakana they do not know.
 */
const KATAKANA = String.raw`\p{Script=Katakana}\u30fc`;
const KATAKANA_PIECE = new RegExp(`[${KATAKANA}]+|[^${KATAKANA}]+`, 'gu');
const KATAKANA_ONLY = new RegExp(`^[${KATAKANA}]+$`, 'u');
const HAS_KATAKANA = /\p{Script=Katakana}/u;

/** The words of a run holding unspaced letters, each with its offset in the run. */
export function splitRun(run: string, emit: (word: string, offset: number) => void): void {
  for (const piece of run.matchAll(SCRIPT_PIECE)) {
    if (!HAS_KATAKANA.test(piece[0])) {
      splitPiece(piece[0], piece.index, emit);
      continue;
    }
    for (const part of piece[0].matchAll(KATAKANA_PIECE)) {
      if (KATAKANA_ONLY.test(part[0])) emit(part[0], piece.index + part.index);
      else splitPiece(part[0], piece.index + part.index, emit);
    }
  }
}

/** The words of a piece of one kind of letters (`SCRIPT_PIECE`), `at` its offset in the run. */
function splitPiece(text: string, at: number, emit: (word: string, offset: number) => void): void {
  if (!UNSPACED_LETTER.test(text) || HANGUL_ONLY.test(text)) {
    emit(text, at);
    return;
  }
  for (let from = 0; from < text.length; from += SEGMENT_CHUNK) {
    const stretch = text.slice(from, from + SEGMENT_CHUNK);
    const bounds = wordBounds(stretch);
    for (let i = 0; i < bounds.length; i += 2) {
      emit(stretch.slice(bounds[i]!, bounds[i + 1]!), at + from + bounds[i]!);
    }
  }
}

/**
 * Traditional Chinese characters to simplified ones, character by character (OpenCC's `t` -> `cn`; its
 * Taiwan phrase table is left out: it reads mainland words as Taiwan's, 序列 "sequence" as 串行 "serial").
 * Simplified text goes through unchanged, and Japanese kanji become the simplified forms of the same
 * characters on both sides of a match.
 */
const TO_SIMPLIFIED = OpenCC.Converter({ from: 't', to: 'cn' });
const HAN = /\p{scx=Han}/u;
/** Chinese words remembered as simplified (a request's words recur, a language's skills share most). */
const SIMPLIFIED_HELD = 8_192;
const toSimplified = remembered<string>(TO_SIMPLIFIED, SIMPLIFIED_HELD);

/**
 * A word in simplified characters: traditional and simplified Chinese are one language written two ways,
 * and a request in one met a skill, or a word of `translations.json`, written in the other as a stranger
 * (幫我規劃 and 帮我规划 shared no word). Words without a Chinese character come back as they are.
 */
export function simplifiedForm(word: string): string {
  return HAN.test(word) ? toSimplified(word) : word;
}
