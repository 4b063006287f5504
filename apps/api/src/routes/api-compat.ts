import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { problems, RevisionQuery } from '../schemas.js';
import { compatGet, compatMenu } from '../services/compat.js';
import { withMissingGh } from '../services/indexing/missing-gh.js';
import { validateRevision } from './caching.js';
import { rawIdentity } from './identity-path.js';

const Text = z.any().describe('text/markdown or text/plain');

/**
 * /api/skills/...: compatibility with clients written for the protocol authors' hub (SPEC 2.2), with the
 * same ETag rules as /v1/skills.
 */
const apiCompatRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/skills',
    {
      schema: {
        operationId: 'compatMenu',
        tags: ['compat'],
        summary: 'A menu as text: one `- <identity>: <description>` line per skill',
        querystring: RevisionQuery.extend({ prefix: z.string().min(1).max(2048) }),
        produces: ['text/plain'],
        response: { 200: Text, ...problems(301, 400, 404, 410, 422, 503) },
      },
    },
    async (request, reply) => {
      const prefix = request.query.prefix;
      const text = await withMissingGh(app, request, prefix, () =>
        compatMenu(app.db, request.viewer, prefix, request.query.rev),
      );
      if (validateRevision(request, reply, text.revision, text.pinned)) return reply;
      return reply.header('content-type', text.contentType).send(text.body);
    },
  );

  app.get(
    '/skills/*',
    {
      schema: {
        operationId: 'compatSkill',
        tags: ['compat'],
        summary:
          'Raw SKILL.md of hub:<namespace>/<name>, a menu as text, or one bundled file (<path>/<file>)',
        querystring: RevisionQuery,
        produces: ['text/markdown', 'text/plain'],
        response: { 200: Text, ...problems(301, 400, 404, 410, 422, 503) },
      },
    },
    async (request, reply) => {
      const identity = rawIdentity(request, '/api/skills/');
      const text = await withMissingGh(app, request, identity, () =>
        compatGet(app.db, request.viewer, identity, request.query.rev),
      );
      if (validateRevision(request, reply, text.revision, text.pinned)) return reply;
      return reply
        .header('content-type', text.contentType)
        .header('x-content-type-options', 'nosniff')

        .send(text.body);
    },
  );
};

export default apiCompatRoutes;
