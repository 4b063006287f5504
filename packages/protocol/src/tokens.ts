// Token counting lives apart from the pure-core barrel: importing gpt-tokenizer's o200k tables costs
// ~0.3-0.7 s, which every `atskills` command would pay at start-up. Only `@atskills/protocol/tokens` loads
// them; the client reaches it through a dynamic import when it renders a resident block.
import { encode } from 'gpt-tokenizer/encoding/o200k_base';

/** Token count of `text` in the o200k_base encoding; special-token text counts as plain text. */
export function countTokens(text: string): number {
  return encode(text, { allowedSpecial: new Set(), disallowedSpecial: new Set() }).length;
}
