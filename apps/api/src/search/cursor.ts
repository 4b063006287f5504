import { createHash } from 'node:crypto';
import { decodeCursor, encodeCursor, ProtocolError } from '@atskills/protocol';
import type { SearchFilters } from './engine.js';

/** Where the next page starts: after the row with this score and identity. */
export interface SearchPosition {
  score: string;
  identity: string;
}

// A cursor is only valid for the query and filters (and engine) that produced it; reusing it with
// another query would silently skip results, so it carries a short fingerprint and is refused otherwise.
function fingerprint(engine: string, query: string, filters: SearchFilters): string {
  const canonical = JSON.stringify([
    engine,
    query.trim().toLowerCase(),
    filters.source ?? '',
    (filters.owner ?? '').toLowerCase(),
    (filters.repo ?? '').toLowerCase(),
    (filters.namespace ?? '').toLowerCase(),
  ]);
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 16);
}

/** Encodes the position after `last` for this engine, query and filters. */
export function searchCursor(
  engine: string,
  query: string,
  filters: SearchFilters,
  last: SearchPosition,
): string {
  return encodeCursor({ f: fingerprint(engine, query, filters), s: last.score, k: last.identity });
}

/** Decodes a cursor made by searchCursor for the same engine, query and filters; else ProtocolError 'bad-cursor'. */
export function readSearchCursor(
  engine: string,
  query: string,
  filters: SearchFilters,
  cursor: string,
): SearchPosition {
  const obj = decodeCursor(cursor);
  const { f, s, k } = obj;
  if (typeof f !== 'string' || typeof s !== 'string' || typeof k !== 'string') {
    throw new ProtocolError('bad-cursor', 'The cursor is not a search cursor');
  }
  if (f !== fingerprint(engine, query, filters)) {
    throw new ProtocolError('bad-cursor', 'The cursor belongs to another query or other filters');
  }
  if (!/^-?\d{1,20}(\.\d{1,8})?$/.test(s) || k.length > 1200) {
    throw new ProtocolError('bad-cursor', 'The cursor position is malformed');
  }
  return { score: s, identity: k };
}
