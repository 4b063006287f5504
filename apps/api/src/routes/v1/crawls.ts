import { type CrawlControl, DiscoverySourceError, discoverySourceOf } from '@atskills/queue';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { problem } from '../../problems.js';
import { problems, TOKEN_REQUIRED } from '../../schemas.js';
import { isHubAdmin } from '../../services/auth/permissions.js';
import { crawlStatusView } from '../../services/crawl-status.js';

/** Body of POST /v1/crawls: an explicit repository list or a discovery source. */
export const StartCrawlRequest = z
  .object({
    repos: z
      .array(z.string().trim().min(3).max(200))
      .min(1)
      .max(100_000)
      .optional()
      .describe('owner/repo or gh:owner/repo'),
    discover: z
      .string()
      .regex(/^(code-search|org:[A-Za-z0-9-]{1,39})$/, 'expected code-search or org:NAME')
      .optional(),
    force: z.boolean().default(false).describe('re-download and re-parse even unchanged repositories'),
  })
  .refine((b) => (b.repos === undefined) !== (b.discover === undefined), {
    message: 'give either repos or discover',
  });

const StartCrawlResponse = z.object({
  runId: z.number().int(),
  requestId: z.string(),
  status: z.literal('running'),
});

const CrawlProgress = z.object({
  id: z.number().int(),
  kind: z.string(),
  status: z.string(),
  startedAt: z.string(),
  finishedAt: z.string().nullable(),
  repositoriesTotal: z.number().int(),
  repositoriesDone: z.number().int(),
  skillsFound: z.number().int(),
  skillsAdded: z.number().int(),
  skillsUpdated: z.number().int(),
  skillsRemoved: z.number().int(),
  errors: z.number().int(),
  outcomes: z.record(z.string(), z.number().int()),
});

/** Body of GET /v1/crawl-status (the web page's crawl-status section reads the same service). */
export const CrawlStatusResponse = z.object({
  lastRun: z
    .object({
      id: z.number().int(),
      kind: z.string(),
      status: z.string(),
      repositoriesTotal: z.number().int(),
      startedAt: z.string(),
      finishedAt: z.string().nullable(),
    })
    .nullable(),
  repositories: z.number().int(),
  due: z.number().int().describe('repositories whose scheduled re-crawl is due'),
  nextDueAt: z.string().nullable(),
  failuresTotal: z.number().int(),
  failures: z.array(
    z.object({
      repository: z.string(),
      at: z.string().nullable(),
      error: z.string().optional().describe('operators only'),
    }),
  ),
});

function requireOperator(request: FastifyRequest): void {
  if (request.viewer.userId === null) {
    throw problem(
      'unauthorized',
      'Starting crawls needs a token with the admin scope',
      {},
      {
        'www-authenticate': 'Bearer realm="atskills"',
      },
    );
  }
  if (!isHubAdmin(request.viewer)) throw problem('forbidden', 'Starting crawls needs the admin scope');
}

function crawlerOf(app: FastifyInstance): CrawlControl {
  if (!app.queue) throw problem('unavailable', 'This instance has no crawl queue');
  return app.queue;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/**
 * Crawl operations: operators start runs (the run and its jobs carry the request id, so their log lines
 * join this request's); anyone reads the crawl status (last run, repositories due, failures).
 */
export default async function crawlRoutes(app: FastifyInstance) {
  const routes = app.withTypeProvider<ZodTypeProvider>();

  routes.post(
    '/crawls',
    {
      schema: {
        operationId: 'startCrawl',
        security: TOKEN_REQUIRED,
        tags: ['ops'],
        summary: 'Start a crawl run (operators): a repository list or a discovery source',
        body: StartCrawlRequest,
        response: { 202: StartCrawlResponse, ...problems(400, 401, 403, 503) },
      },
    },
    async (request, reply) => {
      requireOperator(request);
      const crawler = crawlerOf(app);
      const { repos, discover, force } = request.body;
      let source: ReturnType<typeof discoverySourceOf>;
      try {
        source = discoverySourceOf({ repos, discover });
      } catch (error) {
        if (!(error instanceof DiscoverySourceError)) throw error;
        throw problem('bad-request', `Invalid repositories: ${error.message}`);
      }
      const kind = source.kind === 'known' ? 'rebuild' : source.kind;
      const runId = await crawler.startRun({
        kind,
        source,
        force,
        requestId: request.id,
      });
      request.log.info({ runId, kind, force }, 'crawl run started');
      return reply
        .code(202)
        .header('location', `/v1/crawls/${runId}`)
        .send({ runId, requestId: request.id, status: 'running' as const });
    },
  );

  routes.get(
    '/crawls/:runId',
    {
      schema: {
        operationId: 'getCrawl',
        security: TOKEN_REQUIRED,
        tags: ['ops'],
        summary: 'Progress of a crawl run (operators)',
        params: z.object({ runId: z.coerce.number().int().positive() }),
        response: { 200: CrawlProgress, ...problems(400, 401, 403, 404, 503) },
      },
    },
    async (request) => {
      requireOperator(request);
      const progress = await crawlerOf(app).progress(request.params.runId);
      if (!progress) throw problem('not-found', `No crawl run ${request.params.runId}`);
      return {
        ...progress,
        startedAt: progress.startedAt.toISOString(),
        finishedAt: iso(progress.finishedAt),
      };
    },
  );

  routes.get(
    '/crawl-status',
    {
      schema: {
        operationId: 'getCrawlStatus',
        tags: ['ops'],
        summary: 'Crawl status: last run, repositories due for a re-crawl, recent failures',
        response: { 200: CrawlStatusResponse, ...problems(503) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-cache');
      return crawlStatusView(app.db, app.clock(), isHubAdmin(request.viewer));
    },
  );
}
