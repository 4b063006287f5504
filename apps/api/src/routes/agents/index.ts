import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import { renderLlmsTxt } from '../../agents/llms-txt.js';
import { renderSkillsMd } from '../../agents/skills-md.js';
import { problems, RawBytes } from '../../schemas.js';
import { type ClientTarball, packClient } from '../../services/client-package.js';
import { ifNoneMatchHits } from '../caching.js';
import discoveryRoutes from './discovery.js';
import mcpRoutes from './mcp.js';

export interface AgentRoutesOptions {
  /** The bundled client package folder (apps/cli/dist/package unless a test builds its own). */
  clientPackageDir: string;
}

/** What agents read first: /SKILLS.md, /llms.txt, the installable client and the MCP server (SPEC 2.5). */
const agentRoutes: FastifyPluginAsync<AgentRoutesOptions> = async (app, options) => {
  const hubUrl = app.config.publicUrl;
  const skillsMd = renderSkillsMd(hubUrl, app.config.github.gitBaseUrl);
  const llmsTxt = renderLlmsTxt(hubUrl);

  app.get(
    '/SKILLS.md',
    {
      schema: {
        operationId: 'getSkillsMd',
        tags: ['agents'],
        summary: 'Instructions that make any shell-running agent a client of this hub',
        produces: ['text/markdown'],
      },
    },
    async (_request, reply) =>
      reply.type('text/markdown; charset=utf-8').header('cache-control', 'no-cache').send(skillsMd),
  );

  app.get(
    '/llms.txt',
    {
      schema: {
        operationId: 'getLlmsTxt',
        tags: ['agents'],
        summary: 'Where agents start: SKILLS.md, the MCP server, search, OpenAPI',
        produces: ['text/plain'],
      },
    },
    async (_request, reply) =>
      reply.type('text/plain; charset=utf-8').header('cache-control', 'no-cache').send(llmsTxt),
  );

  // Packed on first request (a copy of the built folder plus hub.json), then kept: the build does not
  // change under a running hub.
  let tarball: Promise<ClientTarball> | undefined;
  app.get(
    '/cli/atskills.tgz',
    {
      config: { revalidates: true },
      schema: {
        operationId: 'getClientPackage',
        tags: ['agents'],
        summary: 'The atskills client as an npm package tarball: npm install -g <hub>/cli/atskills.tgz',
        description:
          'Bundled, with no dependencies; its hub.json names this hub, so the installed client talks to it by default.',
        produces: ['application/gzip'],
        response: { 200: RawBytes, ...problems(503) },
      },
    },
    async (request, reply) => {
      tarball ??= packClient(options.clientPackageDir, hubUrl);
      let packed: ClientTarball;
      try {
        packed = await tarball;
      } catch (error) {
        tarball = undefined; // not built yet: try again on the next request
        throw error;
      }
      reply.header('etag', `"${packed.sha256}"`).header('cache-control', 'no-cache');
      // 304 is documented by config.revalidates (openapi-transform.ts), not in the typed responses.
      if (ifNoneMatchHits(request.headers['if-none-match'], packed.sha256))
        return (reply as FastifyReply).code(304).send();
      return reply
        .type('application/gzip')
        .header('content-disposition', `attachment; filename="atskills-${packed.version}.tgz"`)
        .send(packed.bytes);
    },
  );

  await app.register(mcpRoutes);
  await app.register(discoveryRoutes);
};

export default agentRoutes;
