import type { FastifyRequest } from 'fastify';
import { problem } from '../problems.js';

/**
 * The identity part of a URL as the client sent it (still percent-encoded), after `marker` (e.g.
 * `/v1/skills/`). The router's decoded wildcard is not used: the core's parseIdentity does the decoding
 * itself, so `%2F`, `%3A` and invalid escapes get exactly the protocol's treatment (encoded-separator,
 * bad-percent-encoding).
 */
export function rawIdentity(request: FastifyRequest, marker: string): string {
  const path = request.url.split('?', 1)[0] ?? '';
  const at = path.indexOf(marker);
  const raw = at >= 0 ? path.slice(at + marker.length) : '';
  if (raw === '') throw problem(400, 'bad-identity', 'The URL holds no identity', { reason: 'empty' });
  // A client that escaped the whole identity (encodeURIComponent) also escaped the prefix's colon and every
  // slash; in a URL that is unambiguous, unlike in a message, so accept it. Anywhere else an encoded
  // separator reaches the core, which refuses it (encoded-separator) rather than make a new segment.
  const escapedPrefix = /^(gh|hub)%3A/i.exec(raw);
  if (!escapedPrefix) return raw;
  return `${(escapedPrefix[1] ?? '').toLowerCase()}:${raw.slice(escapedPrefix[0].length).replace(/%2F/gi, '/')}`;
}
