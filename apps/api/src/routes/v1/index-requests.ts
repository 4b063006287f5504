import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { rateLimitKey } from '../../plugins/rate-limit.js';
import { IndexRequestAccepted, IndexRequestBody, problems } from '../../schemas.js';
import { parseRepositoryName, quotaCaller } from '../../services/indexing/index-requests.js';

/** POST /v1/index-requests: anyone may ask for a public repository to be (re)indexed (SPEC 2.6). */
const indexRequestRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    '/index-requests',
    {
      schema: {
        operationId: 'requestIndexing',
        tags: ['index'],
        summary: 'Ask for a public GitHub repository to be (re)indexed',
        description:
          "Anonymous callers too. The name is checked with GitHub's rules before any request; requests for one " +
          'repository coalesce into one crawl; each caller has INDEX_REQUESTS_PER_MINUTE, and INDEX_NEW_REPOS_PER_HOUR ' +
          'crawls of repositories the hub never indexed (429 beyond). 202 with the status URL (body and Location); GET ' +
          'it to follow queued -> crawling -> indexed | failed. 404 with Retry-After when GitHub answered 404 (or ' +
          'private) for the repository within INDEX_NOT_FOUND_TTL_S: no crawl is started.',
        body: IndexRequestBody,
        response: { 202: IndexRequestAccepted, ...problems(400, 404, 415, 429, 503) },
      },
    },
    async (request, reply) => {
      const { owner, repo } = parseRepositoryName(request.body.repo);
      app.indexRequests.spend(rateLimitKey(request));
      const accepted = await app.indexRequests.request(owner, repo, 'api', {
        requestId: request.id,
        caller: quotaCaller(request),
      });
      request.log.info({ repo: accepted.repo, started: accepted.started }, 'index request');
      return reply
        .code(202)
        .header('location', accepted.statusUrl)
        .header('cache-control', 'no-store')
        .send({ ...accepted, status: 'queued' as const });
    },
  );
};

export default indexRequestRoutes;
