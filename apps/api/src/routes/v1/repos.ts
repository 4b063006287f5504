import { formatIdentity } from '@atskills/protocol';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { problem } from '../../problems.js';
import { problems, RepositoryReport, StatsResponse } from '../../schemas.js';
import { getRepositoryReport, getStats } from '../../services/index-info.js';
import { parseRepositoryName, repositoryStatusUrl } from '../../services/indexing/index-requests.js';

/** GET /v1/repos/<owner>/<repo> (index status, skills, problems) and GET /v1/stats. */
const reposRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/repos/:owner/:repo',
    {
      schema: {
        operationId: 'getRepository',
        tags: ['index'],
        summary: "A GitHub repository's index status, its listed skills and every problem found (SPEC 2.6)",
        description:
          'status is queued, crawling, indexed, failed or not-indexed (a repository the hub has not crawled; ' +
          'POST /v1/index-requests asks for it). A renamed or transferred repository answers 301 to its new name.',
        params: z.object({ owner: z.string().min(1).max(100), repo: z.string().min(1).max(100) }),
        response: { 200: RepositoryReport, ...problems(301, 400, 503) },
      },
    },
    async (request, reply) => {
      const { owner, repo } = parseRepositoryName(`${request.params.owner}/${request.params.repo}`);
      const report = await getRepositoryReport(app.db, owner, repo, request.viewer);
      if ('movedTo' in report) {
        const { owner: to, name } = report.movedTo;
        throw problem(
          'moved',
          `${owner}/${repo} is now ${to}/${name}`,
          { location: formatIdentity('gh', `${to}/${name}`) },
          { location: repositoryStatusUrl(app.config.publicUrl, to, name) },
        );
      }
      reply.header('cache-control', 'no-cache');
      return report;
    },
  );

  app.get(
    '/stats',
    {
      schema: {
        operationId: 'getStats',
        tags: ['index'],
        summary: 'Corpus size and the last crawl',
        response: { 200: StatsResponse, ...problems(503) },
      },
    },
    async (request) => getStats(app.db, request.viewer, app.searchEngine.name),
  );
};

export default reposRoutes;
