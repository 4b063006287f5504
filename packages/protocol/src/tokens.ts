// Token counting lives apart from the pure-core barrel: importing gpt-tokenizer's o200k tables costs
// ~0.3-0.7 s, which every `atskills` command would pay at start-up. Only `@atskills/protocol/tokens` loads
// them; the client reaches it through a dynamic import when it renders a resident block.
import { countTokens as countO200k } from 'gpt-tokenizer/encoding/o200k_base';

const PLAIN_TEXT = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };

/** Token count of `text` in the o200k_base encoding; special-token text counts as plain text. */
export function countTokens(text: string): number {
  // The library's count walks the same pieces as encode() without building the token array (a quarter
  // less time on a skill body, where a crawl spends most of its tokenizer time).
  return countO200k(text, PLAIN_TEXT);
}
