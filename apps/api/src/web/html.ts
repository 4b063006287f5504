// A tiny auto-escaping template tag. Hand-written rather than a template engine because pages are plain
// TypeScript functions (no build step, no runtime compilation) and the only thing needed from an engine is
// "every interpolated value is escaped unless it is already trusted HTML", which fits in a few lines.

/** HTML that is safe to emit as is: produced by `html`, by `renderMarkdown` (sanitized) or by `trusted`. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** Escapes text for element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (ch) => ESCAPES[ch] ?? ch);
}

/** Values a template accepts: text and numbers are escaped, SafeHtml passes, arrays are joined, nullish is dropped. */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

function renderValue(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(renderValue).join('');
  return escapeHtml(String(value));
}

/** Template tag: `html\`<p>${text}</p>\`` escapes `text`; nested `html` fragments are kept as HTML. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) out += renderValue(values[i]) + (strings[i + 1] ?? '');
  return new SafeHtml(out);
}

/** Marks a string as trusted HTML; only for markup produced by this module's own code (never user text). */
export function trusted(markup: string): SafeHtml {
  return new SafeHtml(markup);
}
