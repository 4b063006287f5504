import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { problems, TOKEN_REQUIRED } from '../../../schemas.js';
import { createLink, linkStatus, listTeamLinks, reindexLink, unlink } from '../../../services/links/links.js';

const TeamParams = z.object({ team: z.string().min(1).max(100) });
const LinkParams = TeamParams.extend({ collection: z.string().min(1).max(200) });

/** POST /v1/teams/<team>/links body. */
export const CreateLinkBody = z.object({
  repo: z.string().min(3).max(200).describe('the GitHub repository, owner/name'),
  collection: z.string().min(1).max(200).describe('the collection it becomes: hub:<team>/<collection>'),
  folder: z
    .string()
    .max(512)
    .optional()
    .describe('a folder inside the repository to use as the collection root'),
  visibility: z.enum(['private', 'public']).default('private'),
  credential: z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('app') }).describe("the hub's GitHub App, installed on the repository"),
    z
      .object({
        kind: z.literal('token'),
        token: z
          .string()
          .min(1)
          .max(1000)
          .describe('a fine-grained token with read access to contents; stored encrypted, never shown again'),
        expiresAt: z.string().max(64).optional().describe("the token's expiry (ISO 8601), shown to owners"),
      })
      .describe('a fine-grained token the team provides'),
  ]),
});

/** A link as owners see it (the token never; its last four characters and expiry). */
export const LinkResponse = z.object({
  identity: z.string(),
  repository: z.string(),
  folder: z.string(),
  visibility: z.enum(['private', 'public']),
  credential: z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('app'), installationId: z.number().int().nullable() }),
    z.object({ kind: z.literal('token'), last4: z.string(), expiresAt: z.string().nullable() }),
  ]),
  status: z.enum(['queued', 'indexing', 'indexed', 'failed']),
  stale: z.boolean().describe('members read the last good revision while the link fails'),
  failure: z.object({ code: z.string(), message: z.string(), since: z.string().nullable() }).nullable(),
  headCommit: z.string().nullable().describe('the commit the current revision follows'),
  lastIndexedAt: z.string().nullable(),
  problems: z.array(z.object({ path: z.string(), code: z.string(), message: z.string() })),
  createdAt: z.string(),
});

/**
 * Team collections kept in GitHub repositories (SPEC 2.3): owners link, list, re-index and unlink;
 * members read a link's status and problems. Registered under /v1.
 */
const linksRoutes: FastifyPluginAsyncZod = async (app) => {
  const tags = ['teams'];
  const ctx = (request: { viewer: import('../../../services/auth/viewer.js').Viewer; id: string }) => ({
    viewer: request.viewer,
    requestId: request.id,
    now: app.clock(),
  });

  app.post(
    '/teams/:team/links',
    {
      schema: {
        operationId: 'createLink',
        security: TOKEN_REQUIRED,
        tags,
        summary: 'Link a GitHub repository (folder) to hub:<team>/<collection> (owners)',
        description:
          'Needs a publish-scoped token of an owner. With a token credential, GitHub is asked first whether it reads the ' +
          'repository (422 link-credential-refused otherwise); the token is stored encrypted. With the App, the repository ' +
          'needs the App installed and a .atskills-link file naming hub:<team>. The first index starts at once.',
        params: TeamParams,
        body: CreateLinkBody,
        response: { 201: LinkResponse, ...problems(400, 401, 403, 409, 422, 503) },
      },
    },
    async (request, reply) => {
      const view = await createLink(
        app.db,
        app.linkAccess,
        app.linkQueue,
        request.params.team,
        request.body,
        ctx(request),
      );
      request.log.info(
        { link: view.identity, repository: view.repository, credential: view.credential.kind },
        'repository linked',
      );
      return reply.code(201).send(view);
    },
  );

  app.get(
    '/teams/:team/links',
    {
      schema: {
        operationId: 'listLinks',
        security: TOKEN_REQUIRED,
        tags,
        summary: "A team's linked repositories with the status of each (owners)",
        params: TeamParams,
        response: { 200: z.object({ links: z.array(LinkResponse) }), ...problems(400, 401, 403, 503) },
      },
    },
    async (request) => ({ links: await listTeamLinks(app.db, request.viewer, request.params.team) }),
  );

  app.get(
    '/teams/:team/links/:collection',
    {
      schema: {
        operationId: 'getLink',
        security: TOKEN_REQUIRED,
        tags,
        summary: "A linked collection's index status and problems (members; 404 to everyone else)",
        params: LinkParams,
        response: { 200: LinkResponse, ...problems(400, 401, 404, 503) },
      },
    },
    async (request) => linkStatus(app.db, request.viewer, request.params.team, request.params.collection),
  );

  app.post(
    '/teams/:team/links/:collection/index',
    {
      schema: {
        operationId: 'reindexLink',
        security: TOKEN_REQUIRED,
        tags,
        summary: 'Index a linked repository again now (owners)',
        params: LinkParams,
        response: { 202: LinkResponse, ...problems(400, 401, 403, 404, 503) },
      },
    },
    async (request, reply) =>
      reply
        .code(202)
        .send(
          await reindexLink(
            app.db,
            app.linkQueue,
            request.params.team,
            request.params.collection,
            ctx(request),
          ),
        ),
  );

  app.delete(
    '/teams/:team/links/:collection',
    {
      schema: {
        operationId: 'unlink',
        security: TOKEN_REQUIRED,
        tags,
        summary:
          'Unlink: the collection answers 410 to members, 404 to others; the stored token is erased (owners)',
        params: LinkParams,
        response: {
          200: z.object({
            identity: z.string(),
            unlinked: z.literal(true),
            lastCommit: z.string().nullable(),
          }),
          ...problems(400, 401, 403, 404, 503),
        },
      },
    },
    async (request) => {
      const answer = await unlink(app.db, request.params.team, request.params.collection, ctx(request));
      request.log.info({ link: answer.identity }, 'repository unlinked');
      return answer;
    },
  );
};

export default linksRoutes;
