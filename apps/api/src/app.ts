import { randomUUID } from 'node:crypto';
import type { DatabaseHandle } from '@atskills/db';
import { LinkAccess } from '@atskills/github-auth';
import type { CrawlControl } from '@atskills/queue';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import type { Queue } from 'bullmq';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import {
  jsonSchemaTransformObject,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import type { Redis } from 'ioredis';
import type { AppConfig } from './config.js';
import { openapiTransform } from './openapi-transform.js';
import databasePlugin from './plugins/database.js';
import errorsPlugin, { answerClientError, sendProblem } from './plugins/errors.js';
import gracefulClosePlugin from './plugins/graceful-close.js';
import healthPlugin, { type Readiness } from './plugins/health.js';
import indexingPlugin from './plugins/indexing.js';
import jsonTextPlugin from './plugins/json-text.js';
import metricsPlugin, { type HubMetrics } from './plugins/metrics.js';
import queueBoardPlugin, { QUEUE_BOARD_PATH } from './plugins/queue-board.js';
import rateLimitPlugin from './plugins/rate-limit.js';
import readCachePlugin from './plugins/read-cache.js';
import readinessChecksPlugin from './plugins/readiness-checks.js';
import searchPlugin from './plugins/search.js';
import securityPlugin from './plugins/security.js';
import suggestPlugin from './plugins/suggest.js';
import usesPlugin, { type UsesOptions } from './plugins/uses.js';
import viewerPlugin from './plugins/viewer.js';
import { problem } from './problems.js';
import adminRoutes from './routes/admin/index.js';
import agentRoutes from './routes/agents/index.js';
import apiCompatRoutes from './routes/api-compat.js';
import openapiRoutes from './routes/openapi.js';
import opsRoutes from './routes/ops/index.js';
import searchRoutes from './routes/search.js';
import v1Routes from './routes/v1/index.js';
import webRoutes from './routes/web.js';
import { loggerOptions } from './runtime/logging.js';
import { loadOpsConfig, type OpsConfig } from './runtime/ops-config.js';
import { BEARER_SCHEME } from './schemas.js';
import type { SearchEngine } from './search/engine.js';
import { compiledSerializerCompiler } from './serializer.js';
import { DEFAULT_CLIENT_PACKAGE_DIR } from './services/client-package.js';
import type { LinkIndexQueue } from './services/links/links.js';
import type { WindowCounter } from './services/rate-windows.js';
import { isPagePath, sendRefusedPage } from './web/pages/error-page.js';

/** What buildApp can be handed instead of building it from the config (tests, the CLI, benchmarks). */
export interface AppDeps {
  /** A database handle the caller owns (and closes). */
  database?: DatabaseHandle;
  /** A search engine the caller owns; default: Postgres, or Meilisearch with Postgres fallback when MEILI_URL is set. */
  search?: SearchEngine;
  /** The time source (tests pin it). */
  clock?: () => Date;
  /** Starts and watches crawl runs for the ops routes (the crawler, in-process or over BullMQ). */
  queue?: CrawlControl;
  /** The process logger (runtime/start.ts shares it with the crawler); default: one built from the config. */
  logger?: FastifyBaseLogger;
  /** Prometheus series of this instance (the runtime feeds queue and crawl series into it). */
  metrics?: HubMetrics;
  /** Readiness checks, rate limit, CORS, queue dashboard. */
  ops?: OpsDeps;
  /** Where link indexes go; default: the crawl queue's link queue (none without a queue). */
  linkQueue?: LinkIndexQueue;
  /** Credentials of linked repositories; default: built from the configuration. */
  linkAccess?: LinkAccess;
  /** Where uses are counted; default: the ops Redis when there is one, else the database. */
  uses?: UsesOptions;
  /** The bundled client package served at /cli/atskills.tgz; default: apps/cli/dist/package. */
  clientPackageDir?: string;
}

/** What the runtime hands the app for operations; every field is optional so tests can build a bare app. */
export interface OpsDeps {
  /** Rate limit, CORS and shutdown settings (default: the schema's defaults, rate limiting off). */
  config?: OpsConfig;
  readiness?: Readiness;
  /** Redis of the deployment: shared rate-limit counters and the queue readiness check. */
  redis?: Redis;
  /** BullMQ queues shown on the operators' dashboard (services mode only). */
  boardQueues?: Queue[];
  /** Describes the crawl queue for /readyz when there is no Redis (e.g. `{ mode: 'in-process' }`). */
  queueMode?: string;
  /** Without Redis, rate-limit counters shared by the processes of one hub (API_WORKERS: the primary's). */
  sharedRateLimit?: WindowCounter;
}

declare module 'fastify' {
  interface FastifyInstance {
    config: AppConfig;
    clock: () => Date;
    /** Null on an instance without a crawl queue (the ops routes then answer 503). */
    queue: CrawlControl | null;
    linkAccess: LinkAccess;
    linkQueue: LinkIndexQueue | null;
  }
}

/** The app type routes are written against (zod type provider). */
export type App = FastifyInstance;

// Routes whose path carries an identity: a malformed URL there is a bad identity.
const IDENTITY_ROUTES = /^\/(v1\/(skills|archive|files)|api\/skills)\//;

// A NUL, raw or percent-encoded, anywhere in the path or query.
const NUL_IN_URL = /%00|\u0000/i;

// An incoming X-Request-Id is kept when it looks like an id (so logs join up across proxies), else replaced.
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

const DOCS_LOGO =
  '<svg xmlns="http://www.w3.org/2000/svg" width="150" height="32" role="img" aria-label="Back to the @skills hub"><text x="0" y="22" font-family="sans-serif" font-size="16" fill="#fff">← @skills hub</text></svg>';

/** Builds the hub app, ready for `app.inject` or `listen`; nothing listens here. */
export async function buildApp(config: AppConfig, deps: AppDeps = {}): Promise<FastifyInstance> {
  const app = Fastify({
    ...(deps.logger
      ? { loggerInstance: deps.logger }
      : { logger: config.logLevel === 'silent' ? false : loggerOptions(config.logLevel) }),
    bodyLimit: config.bodyLimit,
    trustProxy: config.trustProxy,
    // Timeouts (fastify/demo sets each one with its reason; Fastify's defaults leave three of them off):
    // A socket that sends nothing for two minutes is closed: with the default (0, never) every client that
    // opens connections and goes quiet holds a socket and a file descriptor for good. No answer of the hub
    // takes that long to start, and MCP answers are one response each, not a held-open stream.
    connectionTimeout: 120_000,
    // Idle keep-alive connections are kept longer than the usual proxy idle timeout (60 s on AWS ALB and
    // nginx's upstream default), so the proxy closes first and never sends a request on a socket the hub is
    // closing (a spurious 502). This is Fastify's default, written out so it is not lost.
    keepAliveTimeout: 72_000,
    // The whole request, body included, must arrive within two minutes (default 0: a slow-loris client may
    // trickle a publish upload for ever); BODY_LIMIT bytes take far less on any working link.
    requestTimeout: 120_000,
    // Start-up may open the embedded database and apply migrations before the plugins are ready; on a cold,
    // slow disk that passed Fastify's 10 s default, which fails the boot with a plugin timeout.
    pluginTimeout: 60_000,
    // Identities travel in the path and may be long (SPEC: up to 512 characters, more once percent-encoded).
    routerOptions: { maxParamLength: 4096 },
    // A request Node's parser refuses (a malformed request line or header) never reaches a route: it is
    // answered as every other error is, a problem (Fastify's default writes its own JSON shape).
    clientErrorHandler: answerClientError,
    requestIdHeader: false,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    // Malformed URLs (bad percent-encoding outside our own parsing) become problems like everything else.
    frameworkErrors: (err, request, reply) => {
      const inIdentity = IDENTITY_ROUTES.test(request.url) || request.url.startsWith('/s/');
      const p =
        err.code === 'FST_ERR_BAD_URL' && inIdentity
          ? problem('bad-identity', 'The identity holds an invalid percent-encoding', {
              reason: 'bad-percent-encoding',
            })
          : problem('bad-request', err.message);
      // A page's URL gets a page back, as the web routes' own errors do.
      if (isPagePath(request.url)) return sendRefusedPage(request, reply, p);
      return sendProblem(request, reply, p);
    },
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(compiledSerializerCompiler);
  app.decorate('config', config);
  app.decorate('clock', deps.clock ?? (() => new Date()));
  app.decorate('queue', deps.queue ?? null);
  app.decorate('linkAccess', deps.linkAccess ?? new LinkAccess(config.github.auth, config.github.apiUrl));
  const crawl = deps.queue;
  app.decorate(
    'linkQueue',
    deps.linkQueue ??
      (crawl ? { enqueue: (linkId, options) => crawl.enqueueLinkIndex(linkId, options) } : null),
  );
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // A NUL can never be part of a name, identity, query or cursor, and Postgres refuses it in text (it would
  // surface as a 500 from whichever query meets it first): refuse it once, for every route, before routing.
  app.addHook('onRequest', async (request) => {
    if (!NUL_IN_URL.test(request.url)) return;
    const [path = ''] = request.url.split('?');
    // In an identity it is the core's control-character refusal, as its parser would answer.
    if (IDENTITY_ROUTES.test(path) && NUL_IN_URL.test(path)) {
      throw problem('bad-identity', 'The identity holds a control character.', {
        reason: 'control-char',
      });
    }
    throw problem('bad-request', 'The URL holds a NUL character (%00), which no parameter may contain.', {
      reason: 'nul-character',
    });
  });

  await app.register(gracefulClosePlugin);
  await app.register(errorsPlugin);
  await app.register(jsonTextPlugin);
  await app.register(metricsPlugin, deps.metrics ? { metrics: deps.metrics } : {});
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: '@skills hub',
        description:
          'Search and resolve @skills references (SPEC part 2). Errors are application/problem+json (RFC 9457) with a stable `code`.',
        version: '1.0.0',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      tags: [
        { name: 'search', description: 'Full-text search over indexed skills' },
        { name: 'resolution', description: 'Skills, menus, archives and files with revision headers' },
        { name: 'compat', description: "Routes for clients written for the protocol authors' hub" },
        { name: 'index', description: 'Crawl reports and corpus statistics' },
        { name: 'teams', description: 'Publishing collections (SPEC 2.3)' },
        { name: 'admin', description: 'Users, teams, members, tokens and the audit log' },
        {
          name: 'agents',
          description: 'SKILLS.md, llms.txt, the MCP server and the installable client (SPEC 2.5)',
        },
      ],
      components: {
        securitySchemes: {
          [BEARER_SCHEME]: {
            type: 'http',
            scheme: 'bearer',
            description:
              'A hub token (created by an administrator or `atskills login`). Optional where an operation does not require it: it widens what the caller may read (private collections) and is its rate-limit key.',
          },
        },
      },
      // Anonymous or with a token; operations that need one say so (TOKEN_REQUIRED).
      security: [{}, { [BEARER_SCHEME]: [] }],
    },
    transform: openapiTransform,
    transformObject: jsonSchemaTransformObject,
  });
  // The docs' logo is the way back to the hub's pages.
  await app.register(fastifySwaggerUi, {
    routePrefix: '/docs',
    logo: { type: 'image/svg+xml', content: Buffer.from(DOCS_LOGO), href: '/', target: '_self' },
  });
  await app.register(databasePlugin, { config, ...(deps.database ? { handle: deps.database } : {}) });
  await app.register(readCachePlugin, { config });
  await app.register(searchPlugin, { config, ...(deps.search ? { engine: deps.search } : {}) });
  await app.register(suggestPlugin, { config });
  await app.register(viewerPlugin);
  await app.register(indexingPlugin);
  await app.register(usesPlugin, deps.uses ?? { redis: deps.ops?.redis });
  // Operations around the routes, after the database and search plugins their checks read, and before the
  // routes (the rate limit hooks routes as they are added).
  const ops = deps.ops ?? {};
  // Without runtime settings (tests building a bare app) rate limiting stays off and /metrics is open.
  const opsConfig =
    ops.config ?? Object.freeze({ ...loadOpsConfig({}), rateLimitMax: 0, metricsPublic: true });
  await app.register(healthPlugin, ops.readiness ? { readiness: ops.readiness } : {});
  await app.register(readinessChecksPlugin, { redis: ops.redis, queueMode: ops.queueMode });
  await app.register(securityPlugin, { corsOrigins: opsConfig.corsOrigins, publicUrl: config.publicUrl });
  await app.register(rateLimitPlugin, {
    max: opsConfig.rateLimitMax,
    timeWindow: opsConfig.rateLimitWindow,
    ...(ops.redis ? { redis: ops.redis } : {}),
    ...(ops.sharedRateLimit ? { shared: ops.sharedRateLimit } : {}),
  });
  await app.register(opsRoutes, { metricsPublic: opsConfig.metricsPublic });
  if (ops.boardQueues?.length) {
    await app.register(queueBoardPlugin, { queues: ops.boardQueues, prefix: QUEUE_BOARD_PATH });
  }

  await app.register(openapiRoutes);
  await app.register(searchRoutes);
  await app.register(v1Routes, { prefix: '/v1' });
  await app.register(adminRoutes, { prefix: '/admin' });
  await app.register(apiCompatRoutes, { prefix: '/api' });
  await app.register(agentRoutes, { clientPackageDir: deps.clientPackageDir ?? DEFAULT_CLIENT_PACKAGE_DIR });
  await app.register(webRoutes);

  await app.ready();
  return app;
}
