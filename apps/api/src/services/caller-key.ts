import { createHash } from 'node:crypto';
import type { Viewer } from './auth/viewer.js';

/**
 * What a caller's key is read from: the viewer the viewer plugin verified (absent in apps without it), the
 * headers and the address. A Fastify request fits; services take this shape instead of Fastify's type
 * (ARCHITECTURE.md rule 4), so they run and test without an app.
 */
export interface CallerRequest {
  viewer?: Pick<Viewer, 'tokenId'> | undefined;
  headers: { authorization?: string | string[] | undefined };
  ip: string;
}

/**
 * The caller a request counts against: its verified token's id when it sends a valid one (so a team behind
 * one NAT is not throttled together), else its IP. Only a token the viewer plugin verified gets its own
 * bucket: a made-up bearer string is a failed authentication (counted per address there), never a fresh
 * bucket. Apps without the viewer plugin (bare test apps) fall back to the token's hash.
 */
export function rateLimitKey(request: CallerRequest): string {
  const tokenId = request.viewer?.tokenId;
  if (typeof tokenId === 'number') return `token:${tokenId}`;
  if (request.viewer === undefined) {
    const auth = request.headers.authorization;
    const token = typeof auth === 'string' ? /^Bearer\s+(\S+)$/i.exec(auth)?.[1] : undefined;
    if (token) return `token:${createHash('sha256').update(token).digest('hex').slice(0, 32)}`;
  }
  return `ip:${request.ip}`;
}
