import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { leanJsonRoute } from '../../plugins/security.js';
import { problems, RevisionQuery, SkillOrMenu } from '../../schemas.js';
import { flagRules } from '../../services/flags.js';
import { withMissingGh } from '../../services/indexing/missing-gh.js';
import { canonicalIdentity } from '../../services/locate.js';
import { type CachedRevision, cacheKey, scopeKey } from '../../services/read-cache.js';
import { getSkillView, liveSkillRevision } from '../../services/skill-view.js';
import { ifNoneMatchHits, validateRevision } from '../caching.js';
import { rawIdentity } from '../identity-path.js';

/** GET/HEAD /v1/skills/<identity>: the validating cache's probe and fetch (SPEC 2.2). */
const skillsRoutes: FastifyPluginAsyncZod = async (app) => {
  /**
   * The current revision of a live skill the viewer may read, from the read cache or one indexed lookup;
   * undefined for anything else (menus, gone, unknown, private, unparsable), which takes the full path.
   */
  async function liveRevision(
    request: FastifyRequest,
    identity: string,
  ): Promise<CachedRevision | undefined> {
    const located = canonicalIdentity(identity);
    if (!located) return undefined;
    const cache = app.readCache;
    const key = cache.enabled ? cacheKey(scopeKey(request.viewer), located) : '';
    const cached = cache.enabled ? cache.getRevision(key) : undefined;
    if (cached) return cached;
    const generation = cache.generation;
    const current = await liveSkillRevision(app.db, request.viewer, located);
    if (!current) return undefined;
    cache.putRevision(key, current, generation);
    return current;
  }

  /** Answers from a live revision without reading the skill: 304 on a match, else only the headers (HEAD). */
  function sendRevisionHeaders(
    request: FastifyRequest,
    reply: FastifyReply,
    identity: string,
    current: CachedRevision,
  ) {
    app.noteUse(request, identity);
    if (current.flagRules.length) reply.header('x-skill-flags', current.flagRules.join(', '));
    if (!validateRevision(request, reply, current.revision, false)) reply.code(200).send();
    return reply;
  }

  /** The whole resolution: the skill or menu with its flags and validators, or a 304 (then the reply). */
  async function fullAnswer(request: FastifyRequest, reply: FastifyReply, identity: string, rev?: string) {
    const result = await withMissingGh(app, request, identity, () =>
      getSkillView(app.db, request.viewer, identity, rev),
    );
    if (result.kind === 'skill') {
      const rules = flagRules(result.resolved.flags);
      if (rules.length) reply.header('x-skill-flags', rules.join(', '));
      app.noteUse(request, result.resolved.identity);
    }
    if (
      validateRevision(request, reply, result.view.revision, result.resolved.pinned, result.resolved.private)
    )
      return reply;
    return result.view;
  }

  // Declared before the GET so Fastify does not derive a HEAD from it: the protocol's probe only needs the
  // ETag, and building the whole answer to throw its body away costs ~20x more. Per RFC 9110 9.3.2 a HEAD
  // answer may leave out Content-Length when only generating the content would tell it.
  app.head(
    '/skills/*',
    {
      ...leanJsonRoute,
      config: { revalidates: true },
      schema: {
        operationId: 'probeSkill',
        tags: ['resolution'],
        summary: "A skill's current revision (ETag) without its content",
        description:
          'The headers of GET /v1/skills/<identity> (ETag, Cache-Control, X-Skill-Flags) without a body; 304 on a matching If-None-Match. ' +
          'A live skill answers from its revision alone (no Content-Length); menus and pinned revisions answer as GET does.',
        querystring: RevisionQuery,
        response: { 200: SkillOrMenu, ...problems(301, 400, 404, 410, 422, 503) },
      },
    },
    async (request, reply) => {
      const identity = rawIdentity(request, '/v1/skills/');
      const current = request.query.rev === undefined ? await liveRevision(request, identity) : undefined;
      if (current) return sendRevisionHeaders(request, reply, identity, current);
      // Serialized like the GET so Content-Length is right; Node sends no body for a HEAD.
      return fullAnswer(request, reply, identity, request.query.rev);
    },
  );

  app.get(
    '/skills/*',
    {
      ...leanJsonRoute,
      config: { revalidates: true },
      schema: {
        operationId: 'getSkill',
        tags: ['resolution'],
        summary: 'A skill (frontmatter, body, files) or a menu of the skills under a folder',
        description:
          'The identity with its prefix, e.g. /v1/skills/hub:acme/playbooks/deploy or /v1/skills/gh:owner/repo/path. ' +
          'Strong ETag "<revision>", Cache-Control no-cache, 304 on a matching If-None-Match; ?rev= pins a revision ' +
          '(immutable). 410 gone (lastRevision, lastSeen), 422 over-cap (count, subcollections), 404 unknown or private.',
        querystring: RevisionQuery,
        response: { 200: SkillOrMenu, ...problems(301, 400, 404, 410, 422, 503) },
      },
    },
    async (request, reply) => {
      const identity = rawIdentity(request, '/v1/skills/');
      // The validating cache's common case: the client holds the current revision of a live skill. The read
      // cache or one indexed lookup answers the 304; everything else takes the full resolution below.
      if (request.headers['if-none-match'] && request.query.rev === undefined) {
        const current = await liveRevision(request, identity);
        if (current && ifNoneMatchHits(request.headers['if-none-match'], current.revision)) {
          return sendRevisionHeaders(request, reply, identity, current);
        }
      }
      return fullAnswer(request, reply, identity, request.query.rev);
    },
  );
};

export default skillsRoutes;
