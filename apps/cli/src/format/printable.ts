// Text the hub sends (skill names, descriptions, flag codes, identities) ends up on a terminal or in a model's
// context. Control characters in it could move the cursor, clear the screen or retitle the window (C0 and C1,
// ESC among them), or reorder what is shown (the bidi embeddings, overrides and isolates, as in "Trojan
// Source"), so they are taken out before printing. Removing ESC leaves the rest of an escape sequence as
// inert text ("[2J"), which is enough: nothing is left that a terminal acts on.

/** C0 and C1 controls (DEL included) and the bidi embedding, override and isolate controls. */
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** Line breaks and tabs (C0 and C1 alike, and the Unicode line and paragraph separators). */
const LINE_BREAKS = /[\t\n\v\f\r\u0085\u2028\u2029]/g;

/** `text` without control characters: line breaks and tabs become spaces, the other controls go. */
export function withoutControls(text: string): string {
  return text.replace(LINE_BREAKS, ' ').replace(CONTROL_CHARACTERS, '');
}

/**
 * `text` as one printable line: control characters removed, each run of whitespace one space, trimmed, and
 * cut to at most `max` UTF-16 units with a trailing "…" (never between the halves of a surrogate pair).
 */
export function oneLine(text: string, max = Number.POSITIVE_INFINITY): string {
  const line = withoutControls(text).replace(/\s+/g, ' ').trim();
  if (line.length <= max) return line;
  let end = Math.max(0, max - 1);
  if (end > 0 && isHighSurrogate(line.charCodeAt(end - 1))) end--;
  return `${line.slice(0, end).trimEnd()}…`;
}

/**
 * `text` as one printable line (as oneLine) of at most `maxBytes` bytes of UTF-8, cut between code points
 * with a trailing "…": a budget in bytes holds about as many tokens in every script, where one in characters
 * holds three times as many bytes of Japanese as of English.
 */
export function oneLineWithinBytes(text: string, maxBytes: number): string {
  const line = oneLine(text);
  if (Buffer.byteLength(line, 'utf8') <= maxBytes) return line;
  const room = maxBytes - Buffer.byteLength('…', 'utf8');
  let bytes = 0;
  let end = 0;
  for (const codePoint of line) {
    bytes += Buffer.byteLength(codePoint, 'utf8');
    if (bytes > room) break;
    end += codePoint.length;
  }
  return `${line.slice(0, end).trimEnd()}…`;
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}
