import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { leanJsonRoute } from '../../plugins/security.js';
import { problems, ResolveRequest, ResolveResponse } from '../../schemas.js';
import { resolveBatch } from '../../services/batch-resolve.js';

/** POST /v1/resolve: a session's whole .autotrigger in one round trip. */
const resolveRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/resolve',
    {
      ...leanJsonRoute,
      // A POST that only reads: it must not drop the read cache (plugins/read-cache.ts).
      config: { readOnly: true },
      schema: {
        operationId: 'resolveMany',
        tags: ['resolution'],
        summary: 'Up to 128 identities with the revision the caller holds: what changed and what did not',
        body: ResolveRequest,
        response: { 200: ResolveResponse, ...problems(400, 413, 415, 503) },
      },
    },
    async (request, reply) => {
      // Charged per item against the caller's rate limit (SPEC 2.8); the request itself paid one.
      await app.chargeRateLimit(request, reply, request.body.items.length - 1);
      const response = await resolveBatch(app.db, request.viewer, request.body, app.readCache);
      for (const item of response.items) {
        if (item.status === 'changed' || item.status === 'unchanged') app.noteUse(request, item.identity);
      }
      return response;
    },
  );
};

export default resolveRoutes;
