import { IdentityError } from './errors.js';
import { diskPath, type Identity, parseIdentity } from './identity.js';

/** One `@skills:` reference found in a message. */
export interface Reference extends Identity {
  save: boolean;
  install: boolean;
  /** On-disk folder relative to the project root. */
  disk: string;
  /** The reference exactly as written (without trailing punctuation). */
  raw: string;
  /** Offsets of `raw` in the message (end exclusive). */
  start: number;
  end: number;
}

/** A reference scan result: either a parsed reference or the error of a bad one. */
export type ScannedReference =
  | { ok: true; ref: Reference }
  | { ok: false; raw: string; error: IdentityError };

export const REFERENCE_MARKER = '@skills:';
const SUFFIXES = new Set(['save', 'install']);
// Sentence punctuation that ends a reference rather than belonging to it (ASCII, backtick, CJK full-width).
const TRAILING_PUNCTUATION = new Set([...'.,;:!?)]}\'"`', ...'。、，；：！？）」』】》〉…']);
// '@skills:' right after one of these is part of a word (e.g. an e-mail address), not a reference.
const WORD_CHAR = /[\p{L}\p{N}_.+\-@]/u;
const WHITESPACE = /\s/u;

/** All references of a message, in order; never throws for bad references, it reports them. */
export function scanReferences(message: string): ScannedReference[] {
  const out: ScannedReference[] = [];
  let from = 0;
  for (;;) {
    const start = message.indexOf(REFERENCE_MARKER, from);
    if (start < 0) return out;
    const before = start > 0 ? message[start - 1] : undefined;
    if (before !== undefined && WORD_CHAR.test(before)) {
      from = start + REFERENCE_MARKER.length;
      continue;
    }
    let end = start + REFERENCE_MARKER.length;
    while (end < message.length && !WHITESPACE.test(message[end] as string)) end++;
    from = end;
    while (end > start + REFERENCE_MARKER.length && TRAILING_PUNCTUATION.has(message[end - 1] as string))
      end--;
    const raw = message.slice(start, end);
    try {
      const { identity, save, install } = parseReferenceBody(raw.slice(REFERENCE_MARKER.length));
      out.push({ ok: true, ref: { ...identity, save, install, disk: diskPath(identity), raw, start, end } });
    } catch (error) {
      if (!(error instanceof IdentityError)) throw error;
      out.push({ ok: false, raw, error });
    }
  }
}

/** All references of a message, in order; throws the IdentityError of the first bad one. */
export function extractReferences(message: string): Reference[] {
  const out: Reference[] = [];
  for (const r of scanReferences(message)) {
    if (!r.ok) throw r.error;
    out.push(r.ref);
  }
  return out;
}

/** Parses one reference (with or without the `@skills:` marker); throws IdentityError. */
export function parseReference(text: string): Omit<Reference, 'start' | 'end'> {
  const body = text.startsWith(REFERENCE_MARKER) ? text.slice(REFERENCE_MARKER.length) : text;
  const { identity, save, install } = parseReferenceBody(body);
  return { ...identity, save, install, disk: diskPath(identity), raw: text };
}

/** The `@skills:` text of a reference, percent-encoding what must be so it re-parses the same. */
export function formatReference(ref: { identity: string; save?: boolean; install?: boolean }): string {
  const { source, path } = parseIdentity(ref.identity);
  const prefix = source === 'local' ? '' : `${source}:`;
  const suffixes = `${ref.save ? ':save' : ''}${ref.install ? ':install' : ''}`;
  const chars = [...path];
  // Without suffixes the path ends the reference, so its last character must survive punctuation trimming.
  const encoded = chars
    .map((ch, i) =>
      mustEncode(ch) || (suffixes === '' && i === chars.length - 1 && TRAILING_PUNCTUATION.has(ch))
        ? percentEncode(ch)
        : ch,
    )
    .join('');
  return `${REFERENCE_MARKER}${prefix}${encoded}${suffixes}`;
}

function mustEncode(ch: string): boolean {
  return ch === ':' || ch === '%' || WHITESPACE.test(ch);
}

function percentEncode(ch: string): string {
  return [...new TextEncoder().encode(ch)]
    .map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`)
    .join('');
}

/**
 * Splits `identity[:suffix]*`. Inside a reference a colon in a path is written %3A, so every raw colon
 * separates: the prefix (gh:, hub:, https:) from the path, and the path from each suffix.
 */
function parseReferenceBody(body: string): { identity: Identity; save: boolean; install: boolean } {
  if (body === '') throw new IdentityError('empty', 'The reference names no skill after "@skills:".');
  const parts = body.split(':');
  const first = parts[0] ?? '';
  const second = parts[1];
  let headLength = 1;
  if (/^https?$/i.test(first) && second?.startsWith('//')) headLength = 2;
  // `gh:https://github.com/...`: a redundant prefix before a pasted URL.
  else if (/^gh$/i.test(first) && /^https?$/i.test(second ?? '') && parts[2]?.startsWith('//'))
    headLength = 3;
  else if (second !== undefined && !first.includes('/') && !SUFFIXES.has(second)) headLength = 2;
  const identity = parseIdentity(parts.slice(0, headLength).join(':'));
  let save = false;
  let install = false;
  for (const suffix of parts.slice(headLength)) {
    if (!SUFFIXES.has(suffix)) {
      throw new IdentityError(
        'unknown-suffix',
        `Unknown suffix ":${suffix}"; only :save and :install exist.`,
        {
          suffix,
        },
      );
    }
    if ((suffix === 'save' && save) || (suffix === 'install' && install)) {
      throw new IdentityError('duplicate-suffix', `The suffix ":${suffix}" is given twice.`, { suffix });
    }
    if (suffix === 'save') save = true;
    else install = true;
  }
  return { identity, save, install };
}
