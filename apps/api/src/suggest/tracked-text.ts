/**
 * Text cut and cleaned from a message that still knows where each of its characters came from, so that the
 * phrase a suggestion answers is quoted in the user's own characters ("CLAUDE.md is a mess", not the
 * "CLAUDE is a mess" need finding reads). Hand-written: string replacement libraries do not carry offsets.
 */

/** `text`, and for each of its characters the index in the message it came from. */
export interface TrackedText {
  text: string;
  at: Int32Array;
}

/** A message as tracked text: every character from where it is. */
export function tracked(message: string): TrackedText {
  const at = new Int32Array(message.length);
  for (let i = 0; i < at.length; i++) at[i] = i;
  return { text: message, at };
}

/**
 * `t` with every match of the global `re` replaced by `replacement(match)` (the text is what
 * String.prototype.replace gives). A replacement found inside its match keeps those characters' origins
 * (a file name without its extension, code without its backticks); any other takes the match's start.
 */
export function replaceTracked(
  t: TrackedText,
  re: RegExp,
  replacement: (match: string) => string,
): TrackedText {
  const parts: string[] = [];
  let at: Int32Array = new Int32Array(t.text.length);
  let length = 0;
  const copy = (from: number, to: number) => {
    at = room(at, length + to - from);
    at.set(t.at.subarray(from, to), length);
    length += to - from;
  };
  let from = 0;
  for (const m of t.text.matchAll(re)) {
    parts.push(t.text.slice(from, m.index));
    copy(from, m.index);
    const r = replacement(m[0]);
    const inside = r.length > 0 ? m[0].indexOf(r) : -1;
    parts.push(r);
    if (inside >= 0) copy(m.index + inside, m.index + inside + r.length);
    else {
      at = room(at, length + r.length);
      at.fill(t.at[m.index]!, length, length + r.length);
      length += r.length;
    }
    from = m.index + m[0].length;
  }
  if (from === 0) return t;
  parts.push(t.text.slice(from));
  copy(from, t.text.length);
  return { text: parts.join(''), at: at.subarray(0, length) };
}

/** `at`, grown to hold at least `size` (replacements rarely outgrow what they replace). */
function room(at: Int32Array, size: number): Int32Array {
  if (size <= at.length) return at;
  const grown = new Int32Array(Math.max(size, at.length * 2));
  grown.set(at);
  return grown;
}

/** `t` cut at every match of the global `re` (the separators dropped), as String.prototype.split cuts. */
export function splitTracked(t: TrackedText, re: RegExp): TrackedText[] {
  const pieces: TrackedText[] = [];
  let from = 0;
  for (const m of t.text.matchAll(re)) {
    pieces.push(sliceTracked(t, from, m.index));
    from = m.index + m[0].length;
  }
  pieces.push(sliceTracked(t, from, t.text.length));
  return pieces;
}

/** Characters `from` to `to` of `t` (sharing its origins: tracked text is never changed in place). */
export function sliceTracked(t: TrackedText, from: number, to: number): TrackedText {
  return { text: t.text.slice(from, to), at: t.at.subarray(from, to) };
}

/** Pieces joined by `separator`, each separator character placed where the piece before it ends. */
export function joinTracked(pieces: readonly TrackedText[], separator: string): TrackedText {
  const text = pieces.map((p) => p.text).join(separator);
  const at = new Int32Array(text.length);
  let length = 0;
  pieces.forEach((p, i) => {
    if (i > 0) {
      const end = length > 0 ? at[length - 1]! : (p.at[0] ?? 0);
      at.fill(end, length, length + separator.length);
      length += separator.length;
    }
    at.set(p.at, length);
    length += p.at.length;
  });
  return { text, at };
}
