import { ProtocolError } from './errors.js';

// Opaque pagination cursors: base64url of a small flat JSON object. Hand-written over btoa/atob and
// TextEncoder so it runs unchanged in browsers and Node without a Buffer polyfill.

/** Cursors longer than this are refused before decoding. */
export const MAX_CURSOR_LENGTH = 1024;

/** Encodes a pagination cursor as base64url JSON. */
export function encodeCursor(obj: Record<string, string | number>): string {
  const bytes = new TextEncoder().encode(JSON.stringify(obj));
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary)
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/(?<!=)=+$/, '');
}

/** Decodes a cursor made by encodeCursor; throws ProtocolError 'bad-cursor' on anything malformed. */
export function decodeCursor(s: string): Record<string, string | number> {
  if (
    typeof s !== 'string' ||
    s.length === 0 ||
    s.length > MAX_CURSOR_LENGTH ||
    !/^[A-Za-z0-9_-]+$/.test(s)
  ) {
    throw badCursor();
  }
  let value: unknown;
  try {
    const binary = atob(s.replace(/-/g, '+').replace(/_/g, '/'));
    const bytes = Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    throw badCursor();
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw badCursor();
  const out: Record<string, string | number> = {};
  for (const [key, field] of Object.entries(value)) {
    if (typeof field === 'string' || (typeof field === 'number' && Number.isFinite(field))) {
      Object.defineProperty(out, key, { value: field, enumerable: true, writable: true, configurable: true });
    } else {
      throw badCursor();
    }
  }
  return out;
}

function badCursor(): ProtocolError {
  return new ProtocolError('bad-cursor', 'The cursor is malformed; start again without a cursor.');
}
