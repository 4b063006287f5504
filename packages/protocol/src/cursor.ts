import { ProtocolError } from './errors.js';

/** Encodes a pagination cursor as base64url JSON. */
export function encodeCursor(obj: Record<string, string | number>): string {
  return JSON.stringify(obj);
}

/** Decodes a cursor made by encodeCursor; throws ProtocolError 'bad-cursor'. */
export function decodeCursor(s: string): Record<string, string | number> {
  throw new ProtocolError('bad-cursor', `not implemented: ${s.length}`);
}
