import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { AppConfig } from '../config.js';
import type { SearchEngine } from '../search/engine.js';
import { createFallbackEngine } from '../search/fallback.js';
import { createMeilisearchEngine } from '../search/meilisearch.js';
import { createPostgresEngine } from '../search/postgres.js';
import { instrumentSearchEngine } from './metrics.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The search engine (named so it does not shadow Fastify's `search` route shorthand for HTTP SEARCH). */
    searchEngine: SearchEngine;
  }
}

export interface SearchPluginOptions {
  config: AppConfig;
  /** An engine owned by the caller; when absent the plugin builds one from the config and closes it. */
  engine?: SearchEngine;
}

/** The search engine: Postgres full-text, or Meilisearch (falling back to Postgres) when MEILI_URL is set. */
export default fp(
  async function searchPlugin(app: FastifyInstance, opts: SearchPluginOptions) {
    let engine = opts.engine;
    if (!engine) {
      const postgres = createPostgresEngine(app.db);
      engine = opts.config.meiliUrl
        ? createFallbackEngine(
            createMeilisearchEngine(app.db, {
              url: opts.config.meiliUrl,
              ...(opts.config.meiliMasterKey ? { apiKey: opts.config.meiliMasterKey } : {}),
              index: opts.config.meiliIndex,
            }),
            postgres,
            (err) => app.log.warn({ err }, 'search engine unreachable, answering from postgres'),
          )
        : postgres;
      const owned = engine;
      app.addHook('onClose', async () => owned.close?.());
    }
    // Every query lands in the search latency histogram when metrics are on (see plugins/metrics.ts).
    app.decorate(
      'searchEngine',
      app.hasDecorator('metrics') ? instrumentSearchEngine(engine, app.metrics) : engine,
    );
  },
  { name: 'atskills-search', dependencies: ['atskills-database'] },
);
