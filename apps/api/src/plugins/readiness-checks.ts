import { migrationsApplied } from '@atskills/db';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Redis } from 'ioredis';

/** How /readyz learns about the crawl queue. */
export interface QueueReadiness {
  /** The deployment's Redis: the queue is ready when it answers. */
  redis?: Redis | undefined;
  /** Describes the queue when there is no Redis (e.g. `in-process`). */
  queueMode?: string | undefined;
}

/**
 * The readiness checks of /readyz: the database answers, its migrations are applied, the search engine is
 * healthy, and the crawl queue (Redis, or the mode it runs in) is there.
 */
export default fp(
  async function readinessChecksPlugin(app: FastifyInstance, options: QueueReadiness) {
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
    const redis = options.redis;
    if (redis) {
      app.readiness.addCheck('queue', async () => {
        await redis.ping();
        return { mode: 'bullmq' };
      });
    } else if (options.queueMode) {
      const mode = options.queueMode;
      app.readiness.addCheck('queue', async () => ({ mode }));
    }
  },
  {
    name: 'atskills-readiness-checks',
    dependencies: ['atskills-health', 'atskills-database', 'atskills-search'],
  },
);
