import { formatIdentity, splitIdentityPrefix } from '@atskills/protocol';
import type { FastifyRequest } from 'fastify';
import { problem } from '../problems.js';

// A search result's `reference` (`@skills:hub:x/y`) is what people paste, and it names the same identity as
// `hub:x/y` (MCP's tools take it too); a client that escaped the whole text sent `%40skills%3A`.
const REFERENCE_MARKER = /^(?:@|%40)skills(?::|%3A)/i;

/**
 * The identity part of a URL as the client sent it (still percent-encoded), after `marker` (e.g.
 * `/v1/skills/`), without a leading `@skills:`. The router's decoded wildcard is not used: the core's
 * parseIdentity does the decoding itself, so `%2F`, `%3A` and invalid escapes get exactly the protocol's
 * treatment (encoded-separator, bad-percent-encoding).
 */
export function rawIdentity(request: FastifyRequest, marker: string): string {
  const path = request.url.split('?', 1)[0] ?? '';
  const at = path.indexOf(marker);
  const raw = (at >= 0 ? path.slice(at + marker.length) : '').replace(REFERENCE_MARKER, '');
  if (raw === '') throw problem('bad-identity', 'The URL holds no identity', { reason: 'empty' });
  // A client that escaped the whole identity (encodeURIComponent) also escaped the prefix's colon and every
  // slash; in a URL that is unambiguous, unlike in a message, so accept it. Anywhere else an encoded
  // separator reaches the core, which refuses it (encoded-separator) rather than make a new segment.
  const { source, rest } = splitIdentityPrefix(raw, { encodedColon: true });
  if (source === 'local') return raw;
  const escapedWhole = /%3A$/i.test(raw.slice(0, raw.length - rest.length));
  return formatIdentity(source, escapedWhole ? rest.replace(/%2F/gi, '/') : rest);
}
