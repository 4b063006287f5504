import { MenuRowVerdict } from '@atskills/protocol';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { problems, RevisionQuery } from '../schemas.js';
import { compatGet, compatMenu, compatRevision } from '../services/compat.js';
import { withMissingGh } from '../services/indexing/missing-gh.js';
import { validateRevision } from './caching.js';
import { rawIdentity } from './identity-path.js';

const Text = z.any().describe('text/markdown or text/plain');
const CompatMenuJson = z
  .object({
    skills: z.array(
      z.object({
        id: z.string().describe('the identity, e.g. hub:acme/playbooks/deploy'),
        path: z.string().describe('the identity relative to the hub root (without hub:)'),
        name: z.string(),
        description: z.string(),
        ...MenuRowVerdict,
      }),
    ),
  })
  .describe('the menu; `- <identity>: <description>` text lines instead for Accept: text/plain');

/** What the text menu's ETag adds to the revision, the JSON menu's ETag. */
const TEXT_VALIDATOR_SUFFIX = '-text';

/** Text only for a client that asks for text/plain and not for JSON (the reference client sends no Accept). */
function wantsText(accept: string | undefined): boolean {
  return accept !== undefined && /\btext\/plain\b/i.test(accept) && !/\bapplication\/json\b/i.test(accept);
}

/**
 * /api/skills/...: compatibility with clients written for the protocol authors' hub (SPEC 2.2), with the
 * same ETag rules as /v1/skills.
 */
const apiCompatRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/skills',
    {
      config: { revalidates: true },
      schema: {
        operationId: 'compatMenu',
        tags: ['compat'],
        summary: 'A menu as JSON {"skills":[{id,path,name,description}]}; text lines for Accept: text/plain',
        querystring: RevisionQuery.extend({ prefix: z.string().min(1).max(2048) }),
        produces: ['application/json', 'text/plain'],
        response: { 200: z.union([CompatMenuJson, z.string()]), ...problems(301, 400, 404, 410, 422, 503) },
      },
    },
    async (request, reply) => {
      const prefix = request.query.prefix;
      const menu = await withMissingGh(app, request, prefix, () =>
        compatMenu(app.db, request.viewer, prefix, request.query.rev),
      );
      const text = wantsText(request.headers.accept);
      // A strong validator names one representation (RFC 9110 8.8.3): the text lines get their own, so a
      // cache holding both never revalidates one with the other's tag; the JSON keeps the revision itself.
      const validator = text ? `${menu.revision}${TEXT_VALIDATOR_SUFFIX}` : menu.revision;
      if (validateRevision(request, reply, validator, menu.pinned, menu.private, 'Authorization, Accept'))
        return reply;
      if (text) return reply.header('content-type', 'text/plain; charset=utf-8').send(menu.text);
      return reply.header('content-type', 'application/json; charset=utf-8').send({ skills: menu.skills });
    },
  );

  app.get(
    '/skills/*',
    {
      config: { revalidates: true },
      schema: {
        operationId: 'compatSkill',
        tags: ['compat'],
        summary:
          'Raw SKILL.md of hub:<path> (a folder is 404: ask ?prefix=), one bundled file (<path>/<file>), or {"revision"} (<path>/revision)',
        description:
          'X-Skill-Flags names the flags of a flagged skill, as on GET /v1/skills. A skill the hub judged malicious is ' +
          '403 skill-refused (identity, verdict, flags): none of its text is served.',
        querystring: RevisionQuery,
        produces: ['text/markdown', 'text/plain', 'application/json'],
        response: { 200: Text, ...problems(301, 400, 403, 404, 410, 422, 503) },
      },
    },
    async (request, reply) => {
      const path = rawIdentity(request, '/api/skills/');
      const revision = await withMissingGh(app, request, path, () =>
        compatRevision(app.db, request.viewer, path, request.query.rev),
      );
      if (revision) {
        if (validateRevision(request, reply, revision.revision, revision.pinned, revision.private))
          return reply;
        return reply
          .header('content-type', 'application/json; charset=utf-8')
          .send({ revision: revision.revision });
      }
      const text = await withMissingGh(app, request, path, () =>
        compatGet(app.db, request.viewer, path, request.query.rev),
      );
      app.noteUse(request, text.skillIdentity);
      if (text.flags.length) reply.header('x-skill-flags', text.flags.join(', '));
      if (validateRevision(request, reply, text.revision, text.pinned, text.private)) return reply;
      return reply
        .header('content-type', text.contentType)
        .header('x-content-type-options', 'nosniff')
        .send(text.body);
    },
  );
};

export default apiCompatRoutes;
