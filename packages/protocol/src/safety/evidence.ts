// Helpers that turn a match into a short, safe-to-display excerpt.

const EVIDENCE_MAX = 100;

/**
 * True for characters that do not render visibly or that alter how text around them renders:
 * C0/C1 controls (except tab), Unicode format characters (Cf), line/paragraph separators, and
 * variation selectors. These are the characters an excerpt must never show raw.
 */
export function isInvisibleCharacter(codePoint: number): boolean {
  if (codePoint === 0x09) return false;
  if (codePoint < 0x20 || (codePoint >= 0x7f && codePoint <= 0x9f)) return true;
  if (codePoint === 0x2028 || codePoint === 0x2029) return true;
  if ((codePoint >= 0xfe00 && codePoint <= 0xfe0f) || (codePoint >= 0xe0100 && codePoint <= 0xe01ef))
    return true;
  return FORMAT_CHARACTER.test(String.fromCodePoint(codePoint));
}

const FORMAT_CHARACTER = /^\p{Cf}$/u;

/** `\u202E` for BMP code points, `\u{E0041}` for astral ones. */
export function escapeCodePoint(codePoint: number): string {
  const hex = codePoint.toString(16).toUpperCase();
  return codePoint > 0xffff ? `\\u{${hex}}` : `\\u${hex.padStart(4, '0')}`;
}

/** Replaces every invisible or control character with its `\uXXXX` escape. */
export function escapeInvisible(text: string): string {
  let out = '';
  for (const char of text) {
    const codePoint = char.codePointAt(0)!;
    out += isInvisibleCharacter(codePoint) ? escapeCodePoint(codePoint) : char;
  }
  return out;
}

/**
 * A short excerpt of `line` around [start, end): whitespace collapsed, invisible characters escaped,
 * at most ~100 characters with an ellipsis where it was cut.
 */
export function excerpt(line: string, start = 0, end = line.length): string {
  const matchLength = end - start;
  let from =
    matchLength >= EVIDENCE_MAX ? start : Math.max(0, start - Math.floor((EVIDENCE_MAX - matchLength) / 2));
  const to = Math.min(line.length, from + EVIDENCE_MAX);
  if (matchLength < EVIDENCE_MAX) from = Math.max(0, Math.min(from, to - EVIDENCE_MAX));
  let text = line.slice(from, to);
  // Never cut a surrogate pair in half.
  if (/[\uD800-\uDBFF]$/.test(text)) text = text.slice(0, -1);
  if (/^[\uDC00-\uDFFF]/.test(text)) text = text.slice(1);
  // Escape first: \s and trim() also match U+FEFF, which must stay visible as an escape.
  const body = escapeInvisible(text).trim().replace(/\s+/g, ' ');
  return `${from > 0 ? '…' : ''}${body}${to < line.length ? '…' : ''}`;
}

/** Shows only the first `keep` characters of a secret, e.g. `ghp_ab…[redacted, 40 chars]`. */
export function redact(secret: string, keep: number): string {
  return `${secret.slice(0, keep)}…[redacted, ${secret.length} chars]`;
}
