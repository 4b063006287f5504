import { migrationsApplied } from '@atskills/db';
import type { Queue } from 'bullmq';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Redis } from 'ioredis';
import healthPlugin, { type Readiness } from '../plugins/health.js';
import queueBoardPlugin, { QUEUE_BOARD_PATH } from '../plugins/queue-board.js';
import rateLimitPlugin from '../plugins/rate-limit.js';
import securityPlugin from '../plugins/security.js';
import opsRoutes from '../routes/ops/index.js';
import { loadOpsConfig, type OpsConfig } from './ops-config.js';

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
}

/**
 * Operations around the API routes: readiness checks of the database, migrations, search engine and
 * queue; helmet, CORS and compression; the rate limit; /healthz, /readyz, /metrics; the queue dashboard.
 * Registered after the database and search plugins and before the routes (the rate limit hooks routes
 * as they are added).
 */
export default fp(
  async function opsPlugin(app: FastifyInstance, deps: OpsDeps) {
    // Without runtime settings (tests building a bare app) rate limiting stays off and /metrics is open.
    const config =
      deps.config ?? Object.freeze({ ...loadOpsConfig({}), rateLimitMax: 0, metricsPublic: true });
    await app.register(healthPlugin, deps.readiness ? { readiness: deps.readiness } : {});
    app.readiness.addCheck('database', async () => {
      await app.database.ping();
      return { mode: app.database.mode };
    });
    app.readiness.addCheck('migrations', async () => {
      if (!(await migrationsApplied(app.database))) throw new Error('pending migrations');
      return {};
    });
    app.readiness.addCheck('search', async () => {
      const health = await app.searchEngine.health();
      // A Meilisearch outage with Postgres answering is degraded, not unready (the detail says so).
      return health.ok
        ? { engine: app.searchEngine.name, ...(health.detail ? { detail: health.detail } : {}) }
        : { status: 'down', engine: app.searchEngine.name, error: health.detail ?? 'unhealthy' };
    });
    const redis = deps.redis;
    if (redis) {
      app.readiness.addCheck('queue', async () => {
        await redis.ping();
        return { mode: 'bullmq' };
      });
    } else if (deps.queueMode) {
      const mode = deps.queueMode;
      app.readiness.addCheck('queue', async () => ({ mode }));
    }

    await app.register(securityPlugin, { corsOrigins: config.corsOrigins, publicUrl: app.config.publicUrl });
    await app.register(rateLimitPlugin, {
      max: config.rateLimitMax,
      timeWindow: config.rateLimitWindow,
      ...(redis ? { redis } : {}),
    });
    await app.register(opsRoutes, { metricsPublic: config.metricsPublic });
    if (deps.boardQueues?.length) {
      await app.register(queueBoardPlugin, { queues: deps.boardQueues, prefix: QUEUE_BOARD_PATH });
    }
  },
  { name: 'atskills-ops', dependencies: ['atskills-database', 'atskills-search', 'atskills-metrics'] },
);
