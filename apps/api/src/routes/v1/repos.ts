import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { problems, RepositoryReport, StatsResponse } from '../../schemas.js';
import { getRepositoryReport, getStats } from '../../services/index-info.js';

/** GET /v1/repos/<owner>/<repo> (latest crawl report) and GET /v1/stats. */
const reposRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    '/repos/:owner/:repo',
    {
      schema: {
        operationId: 'getRepository',
        tags: ['index'],
        summary: 'A crawled GitHub repository and its latest crawl report',
        params: z.object({ owner: z.string().min(1).max(100), repo: z.string().min(1).max(100) }),
        response: { 200: RepositoryReport, ...problems(400, 404, 503) },
      },
    },
    async (request) => getRepositoryReport(app.db, request.params.owner, request.params.repo),
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
