import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Gauge } from 'prom-client';
import type { AppConfig } from '../config.js';
import { logSnapshot } from '../runtime/snapshots.js';
import type { SearchEngine } from '../search/engine.js';
import { createFallbackEngine } from '../search/fallback.js';
import { createMeilisearchEngine } from '../search/meilisearch.js';
import { createMemoryEngine, type MemoryEngine } from '../search/memory-engine.js';
import { createPostgresEngine } from '../search/postgres.js';
import { createEmbeddingsClient, type VectorSearch } from '../suggest/embeddings.js';
import { wroteThroughThisProcess } from './local-write.js';
import { instrumentSearchEngine } from './metrics.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The search engine (named so it does not shadow Fastify's `search` route shorthand for HTTP SEARCH). */
    searchEngine: SearchEngine;
    /** Uses were written by this process (decorated with the in-memory engine only: it holds them). */
    searchUsesWritten: () => void;
    /** Skills nearest an embedding by the search engine's index (Meilisearch with EMBEDDINGS_URL), else null. */
    searchVectors: VectorSearch | null;
    /**
     * Settles once the in-memory search index's first build has ended, serving or failed (at once for the
     * other engines, which build nothing in this process).
     */
    searchIndexFirstBuild: Promise<void>;
    /**
     * Settles once the in-memory search index first serves, or its first build ended without it (at once for
     * the other engines): the suggestion model builds after it, while the index is stored.
     */
    searchIndexServes: Promise<void>;
    /**
     * Whether the in-memory index's first build loads its stored snapshot (a restart), known from the
     * snapshot's header before the first build starts; false when it builds or another engine answers.
     */
    searchIndexLoads: Promise<boolean>;
  }
}

export interface SearchPluginOptions {
  config: AppConfig;
  /** An engine owned by the caller; when absent the plugin builds one from the config and closes it. */
  engine?: SearchEngine;
}

/** Exposes the in-memory index's size and state on /metrics. */
function reportIndex(app: FastifyInstance, engine: MemoryEngine) {
  const registers = [app.metrics.registry];
  new Gauge({
    name: 'atskills_search_index_bytes',
    help: 'Estimated memory held by the in-memory search index (bytes)',
    registers,
    collect() {
      this.set(engine.status().bytes);
    },
  });
  new Gauge({
    name: 'atskills_search_index_documents',
    help: 'Skills and collections held by the in-memory search index',
    registers,
    collect() {
      this.set(engine.status().documents);
    },
  });
  new Gauge({
    name: 'atskills_search_index_ready',
    help: '1 when the in-memory search index serves, 0 while it builds (Postgres answers meanwhile)',
    registers,
    collect() {
      this.set(engine.status().ready ? 1 : 0);
    },
  });
  new Gauge({
    name: 'atskills_search_index_build_seconds',
    help: 'How long the last full build of the in-memory search index took',
    registers,
    collect() {
      this.set(engine.status().buildSeconds ?? 0);
    },
  });
  new Gauge({
    name: 'atskills_search_index_restore_seconds',
    help: 'How long the in-memory search index took to load from its stored snapshot at start (0 when it was built)',
    registers,
    collect() {
      this.set(engine.status().restoreSeconds ?? 0);
    },
  });
}

/**
 * The search engine: the in-memory index (Postgres answering while it builds), Postgres alone
 * (SEARCH_ENGINE=postgres), or Meilisearch falling back to Postgres when MEILI_URL is set.
 */
export default fp(
  async function searchPlugin(app: FastifyInstance, opts: SearchPluginOptions) {
    let engine = opts.engine;
    let searchVectors: VectorSearch | null = null;
    let firstBuild = Promise.resolve();
    let firstServes = Promise.resolve();
    let loads = Promise.resolve(false);
    if (!engine) {
      const postgres = createPostgresEngine(app.db);
      if (opts.config.meiliUrl) {
        const meili = createMeilisearchEngine(app.db, {
          url: opts.config.meiliUrl,
          ...(opts.config.meiliMasterKey ? { apiKey: opts.config.meiliMasterKey } : {}),
          index: opts.config.meiliIndex,
          ...(opts.config.embeddings ? { embeddings: createEmbeddingsClient(opts.config.embeddings) } : {}),
        });
        if (opts.config.embeddings) searchVectors = meili.vectorSearch;
        engine = createFallbackEngine(meili, postgres, (err) =>
          app.log.warn({ err }, 'search engine unreachable, answering from postgres'),
        );
      } else if (opts.config.searchEngine === 'memory') {
        const memory = createMemoryEngine(app.db, postgres, {
          maxBytes: opts.config.searchIndexBytes,
          onError: (err) => app.log.warn({ err }, 'in-memory search index'),
          snapshots: opts.config.indexSnapshots,
          onSnapshot: (event) => logSnapshot(app, 'in-memory search index', event),
        });
        app.addHook('onReady', async () => {
          memory.start((onEvent) => app.database.watchIndexChanges(onEvent));
        });
        // A write through this process is seen by its author's next search (no wait for the NOTIFY). A POST
        // that only reads (config.readOnly: /v1/suggest, /v1/resolve) is no write: marking the index dirty
        // made the next request read the change feed first (two scans of the skills table).
        app.addHook('onResponse', async (request, reply) => {
          if (wroteThroughThisProcess(request, reply)) memory.noteLocalWrite();
        });
        if (app.hasDecorator('metrics')) reportIndex(app, memory);
        app.decorate('searchUsesWritten', () => memory.noteUsesWritten());
        firstBuild = memory.firstBuild();
        firstServes = memory.firstServes();
        // Asked now, before onReady starts the first build (which the answer describes).
        loads = memory.storedSnapshotUsable().catch(() => false);
        engine = memory;
      } else {
        engine = postgres;
      }
      const owned = engine;
      app.addHook('onClose', async () => owned.close?.());
    }
    // Every query lands in the search latency histogram when metrics are on (see plugins/metrics.ts).
    app.decorate(
      'searchEngine',
      app.hasDecorator('metrics') ? instrumentSearchEngine(engine, app.metrics) : engine,
    );
    app.decorate('searchVectors', searchVectors);
    app.decorate('searchIndexFirstBuild', firstBuild);
    app.decorate('searchIndexServes', firstServes);
    app.decorate('searchIndexLoads', loads);
  },
  { name: 'atskills-search', dependencies: ['atskills-database'] },
);
