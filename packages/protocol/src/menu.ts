import { flaggedNote, printableIdentity, refusalLine, refusingVerdict } from './frame.js';
import { formatReference, REFERENCE_MARKER } from './references.js';

/** One line of a menu. */
export interface MenuItem {
  identity: string;
  name?: string;
  description: string;
  /** The hub's safety flag codes of the skill that still hold (SPEC 2.8); absent when none. */
  flags?: readonly string[];
  /** Present when the hub judged the skill malicious: its row is the refusal line, never its own text. */
  refused?: true;
}

/**
 * Renders a menu: one `- <identity>: <description>` line per item, joined with \n. Each identity is written
 * as a reference writes it (SPEC 1.2: a row's identity is itself a valid reference, so a space is `%20`); a
 * flagged row ends with `[flagged: …]`, as the resident block's rows do; a refused row (or one whose flags
 * hold a refusing verdict) carries the refusal line instead of the skill's description.
 */
export function renderMenu(items: readonly MenuItem[]): string {
  return items
    .map((item) => {
      const identity = referenceForm(item.identity);
      const verdict = refusingVerdict(item.flags) ?? (item.refused ? 'reported-malicious' : undefined);
      if (verdict) return `- ${identity}: ${refusalLine(item.identity, verdict)}`;
      return `- ${identity}: ${oneLine(item.description)}${flaggedNote(item.flags?.map(oneLine) ?? [], ' ')}`;
    })
    .join('\n');
}

/** The identity as `@skills:<it>` would reference it; a text that is no identity is printed inert. */
function referenceForm(identity: string): string {
  try {
    return formatReference({ identity }).slice(REFERENCE_MARKER.length);
  } catch {
    return printableIdentity(identity);
  }
}

/**
 * `text` on one line: every line break, with the white space around it, folded to one space (descriptions
 * may be multi-line YAML; a menu or resident row must stay one line).
 */
export function oneLine(text: string): string {
  return text.replace(/(?<!\s)\s*[\r\n]\s*/g, ' ').trim();
}
