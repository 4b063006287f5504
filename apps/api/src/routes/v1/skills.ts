import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { problems, RevisionQuery, SkillOrMenu } from '../../schemas.js';
import { flagRules } from '../../services/flags.js';
import { getSkillView } from '../../services/skill-view.js';
import { validateRevision } from '../caching.js';
import { rawIdentity } from '../identity-path.js';

/** GET/HEAD /v1/skills/<identity>: the validating cache's probe and fetch (SPEC 2.2). */
const skillsRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/skills/*',
    {
      schema: {
        operationId: 'getSkill',
        tags: ['resolution'],
        summary: 'A skill (frontmatter, body, files) or a menu of the skills under a folder',
        description:
          'The identity with its prefix, e.g. /v1/skills/hub:acme/playbooks/deploy or /v1/skills/gh:owner/repo/path. ' +
          'Strong ETag "<revision>", Cache-Control no-cache, 304 on a matching If-None-Match; ?rev= pins a revision ' +
          '(immutable). 410 gone (lastRevision, lastSeen), 422 over-cap (count, subcollections), 404 unknown or private.',
        querystring: RevisionQuery,
        response: { 200: SkillOrMenu, ...problems(400, 404, 410, 422, 503) },
      },
    },
    async (request, reply) => {
      const identity = rawIdentity(request, '/v1/skills/');
      const result = await getSkillView(app.db, request.viewer, identity, request.query.rev);
      if (result.kind === 'skill') {
        const rules = flagRules(result.resolved.flags);
        if (rules.length) reply.header('x-skill-flags', rules.join(', '));
      }
      if (validateRevision(request, reply, result.view.revision, result.resolved.pinned)) return reply;
      return result.view;
    },
  );
};

export default skillsRoutes;
