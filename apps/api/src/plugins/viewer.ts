import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
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

/** Decorates every request with `request.viewer`. */
export default fp(
  async function viewerPlugin(app: FastifyInstance) {
    app.decorateRequest('viewer', null as unknown as Viewer);
    app.addHook('onRequest', async (request) => {
      // Set first, so an error answer for a bad token still sees a viewer.
      request.viewer = ANONYMOUS_VIEWER;
      request.viewer = await resolveViewer(request);
    });
  },
  { name: 'atskills-viewer', dependencies: ['atskills-database'] },
);
