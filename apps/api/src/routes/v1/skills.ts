import { findLiveSkillRevision } from '@atskills/db';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { problems, RevisionQuery, SkillOrMenu } from '../../schemas.js';
import { flagRules } from '../../services/flags.js';
import { locateIdentity } from '../../services/locate.js';
import { getSkillView } from '../../services/skill-view.js';
import { ifNoneMatchHits, validateRevision } from '../caching.js';
import { rawIdentity } from '../identity-path.js';

/** The canonical identity of request text, or undefined when it does not parse (the full path answers 400). */
function tryLocate(text: string): string | undefined {
  try {
    return locateIdentity(text).identity.identity;
  } catch {
    return undefined;
  }
}

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
      // The validating cache's common case: the client holds the current revision of a live skill. One
      // indexed lookup answers the 304; everything else takes the full resolution below.
      if (request.headers['if-none-match'] && request.query.rev === undefined) {
        const located = tryLocate(identity);
        const current = located && (await findLiveSkillRevision(app.db, request.viewer, located));
        if (current && ifNoneMatchHits(request.headers['if-none-match'], current.revision)) {
          const rules = flagRules(current.flags);
          if (rules.length) reply.header('x-skill-flags', rules.join(', '));
          validateRevision(request, reply, current.revision, false);
          return reply;
        }
      }
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
