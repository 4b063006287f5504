import type { IndexWatch } from '@atskills/db';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Counter } from 'prom-client';
import type { AppConfig } from '../config.js';
import { ReadCache } from '../services/read-cache.js';
import { wroteThroughThisProcess } from './local-write.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** In-process answers of hot reads, dropped on every index change (services/read-cache.ts). */
    readCache: ReadCache;
  }
}

/**
 * The read cache and the change feed that keeps it honest. Only the Postgres engine's search pages are
 * cached: Meilisearch indexes asynchronously after the database commit, so a NOTIFY would come too early.
 */
export default fp(
  async function readCachePlugin(app: FastifyInstance, opts: { config: AppConfig }) {
    const cache = new ReadCache(opts.config.readCacheBytes);
    app.decorate('readCache', cache);
    if (cache.budgetBytes === 0) return;

    let watch: IndexWatch | undefined;
    app.addHook('onReady', async () => {
      watch = await app.database.watchIndexChanges((event) => {
        if (event === 'lost' || event === 'live') app.log.info({ event }, 'index change feed');
        cache.onIndexEvent(event);
      });
      cache.leaseMs = watch.leaseMs;
    });
    app.addHook('onClose', async () => watch?.close());
    // A write through this process is dropped at once, so its author's next read never races the NOTIFY.
    app.addHook('onResponse', async (request, reply) => {
      if (wroteThroughThisProcess(request, reply)) cache.flush();
    });

    if (app.hasDecorator('metrics')) {
      new Counter({
        name: 'atskills_read_cache_total',
        help: 'Read cache lookups (hit, miss) and flushes (index changes)',
        labelNames: ['outcome'] as const,
        registers: [app.metrics.registry],
        collect() {
          this.reset();
          this.inc({ outcome: 'hit' }, cache.counters.hits);
          this.inc({ outcome: 'miss' }, cache.counters.misses);
          this.inc({ outcome: 'flush' }, cache.counters.flushes);
        },
      });
    }
  },
  { name: 'atskills-read-cache', dependencies: ['atskills-database'] },
);
