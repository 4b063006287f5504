import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { LRUCache } from 'lru-cache';
import { problem } from '../problems.js';
import { AuthFailureCounter } from '../services/auth/auth-failures.js';
import { viewerFromAuthorization } from '../services/auth/authenticate.js';
import { ANONYMOUS_VIEWER, type Viewer } from '../services/auth/viewer.js';

declare module 'fastify' {
  interface FastifyRequest {
    viewer: Viewer;
  }
}

/**
 * Works out the viewer of a request from `Authorization: Bearer ask_...`: anonymous without a header; a
 * 401 problem for a malformed, unknown, revoked or expired token (see services/auth/authenticate.ts).
 */
export async function resolveViewer(request: FastifyRequest): Promise<Viewer> {
  const app = request.server;
  return viewerFromAuthorization(
    app.db,
    request.headers.authorization,
    app.clock(),
    ANONYMOUS_VIEWER,
    (err) => request.log.warn({ err }, 'could not record token use'),
  );
}

/**
 * Decorates every request with `request.viewer`. Failed authentications are counted per client address
 * (AUTH_FAILURES_MAX a minute): past the limit a request with a token is refused with 429 before any lookup,
 * whatever token it carries, so made-up tokens cannot be tried by the thousand.
 */
export default fp(
  async function viewerPlugin(app: FastifyInstance) {
    const failures = new AuthFailureCounter(app.config?.authFailuresMax ?? 0);
    // Tokens that verified lately (by hash): a caller sharing an address with a token guesser (one NAT)
    // keeps working while the address is cut off; only unknown strings wait out the window.
    const verified = new LRUCache<string, true>({ max: 10_000, ttl: 10 * 60_000 });
    app.decorateRequest('viewer', null as unknown as Viewer);
    app.addHook('onRequest', async (request) => {
      // Set first, so an error answer for a bad token still sees a viewer.
      request.viewer = ANONYMOUS_VIEWER;
      const header = request.headers.authorization;
      if (header === undefined) return;
      const now = Date.now();
      const key = createHash('sha256').update(String(header)).digest('base64url');
      const wait = verified.has(key) ? 0 : failures.retryAfterSeconds(request.ip, now);
      if (wait > 0) {
        throw problem(
          'rate-limited',
          `Too many failed authentications from this address; retry in ${wait} s.`,
          { retryAfterSeconds: wait },
          { 'retry-after': String(wait) },
        );
      }
      try {
        request.viewer = await resolveViewer(request);
        if (request.viewer.tokenId !== null) verified.set(key, true);
      } catch (err) {
        if ((err as { status?: number }).status === 401) failures.fail(request.ip, now);
        throw err;
      }
    });
  },
  { name: 'atskills-viewer', dependencies: ['atskills-database'] },
);
