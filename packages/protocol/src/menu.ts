/** One line of a menu. */
export interface MenuItem {
  identity: string;
  name?: string;
  description: string;
}

/** Renders a menu: one `- <identity>: <description>` line per item, joined with \n. */
export function renderMenu(items: MenuItem[]): string {
  return items.map((item) => `- ${item.identity}: ${oneLine(item.description)}`).join('\n');
}

/**
 * `text` on one line: every line break, with the white space around it, folded to one space (descriptions
 * may be multi-line YAML; a menu or resident row must stay one line).
 */
export function oneLine(text: string): string {
  return text.replace(/(?<!\s)\s*[\r\n]\s*/g, ' ').trim();
}
