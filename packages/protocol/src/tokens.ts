// Token counting lives apart from the pure-core barrel: importing gpt-tokenizer's o200k tables costs
// ~0.3-0.7 s, which every `atskills` command would pay at start-up. Only `@atskills/protocol/tokens` loads
// them; the client reaches it through a dynamic import when it renders a resident block.
import { countTokens as countO200k } from 'gpt-tokenizer/encoding/o200k_base';

const PLAIN_TEXT = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };

/**
 * The longest run of non-space characters counted whole. BPE merges a piece in time quadratic in its
 * length when its characters repeat: one word of 16,384 `a`s took 0.43 s, of 262,144 (what a skill body
 * is counted over exactly) 52 s, on a crawl job or a publish request. Longer runs are counted a chunk of
 * this many characters at a time, which can differ from the exact count by a token a chunk; no word and
 * few URLs are that long.
 */
export const MAX_COUNTED_RUN = 256;
// The lookbehind starts a match only where a run starts: without it every character of a run shorter than
// the bound would start a scan to the run's end.
const LONG_RUN = new RegExp(String.raw`(?<!\S)\S{${MAX_COUNTED_RUN + 1},}`, 'g');

/**
 * Token count of `text` in the o200k_base encoding; special-token text counts as plain text. Runs of more
 * than MAX_COUNTED_RUN non-space characters are counted in chunks of that length.
 */
export function countTokens(text: string): number {
  // The library's count walks the same pieces as encode() without building the token array (a quarter
  // less time on a skill body, where a crawl spends most of its tokenizer time).
  let total = 0;
  let from = 0;
  for (const run of text.matchAll(LONG_RUN)) {
    const at = run.index;
    if (at > from) total += countO200k(text.slice(from, at), PLAIN_TEXT);
    for (let i = at; i < at + run[0].length; i += MAX_COUNTED_RUN) {
      total += countO200k(text.slice(i, Math.min(i + MAX_COUNTED_RUN, at + run[0].length)), PLAIN_TEXT);
    }
    from = at + run[0].length;
  }
  return total + countO200k(text.slice(from), PLAIN_TEXT);
}
