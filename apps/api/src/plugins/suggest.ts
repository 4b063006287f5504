import { countSearchDocuments } from '@atskills/db';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Gauge } from 'prom-client';
import type { AppConfig } from '../config.js';
import { logSnapshot } from '../runtime/snapshots.js';
import { buildModelInThread } from '../suggest/build-thread.js';
import { createSuggestEngine, type SuggestEngine, type SuggestEngineOptions } from '../suggest/engine.js';
import { countOutcomes } from '../suggest/outcomes.js';
import { ConnectionIntake } from '../suggest/turns.js';
import { wroteThroughThisProcess } from './local-write.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The suggestion engine (SPEC 2.7), over the search engine. */
    suggestEngine: SuggestEngine;
  }
}

export interface SuggestPluginOptions {
  config: AppConfig;
}

/** Exposes the suggestion model's size and state on /metrics (its memory budget is SUGGEST_MODEL_MB). */
function reportModel(app: FastifyInstance, engine: SuggestEngine) {
  const registers = [app.metrics.registry];
  const gauge = (name: string, help: string, value: () => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(value());
      },
    });
  gauge(
    'atskills_suggest_model_bytes',
    'Estimated memory held by the suggestion model and its vectors (bytes)',
    () => engine.status().bytes,
  );
  gauge(
    'atskills_suggest_model_documents',
    'Skills held by the suggestion model',
    () => engine.status().documents,
  );
  gauge(
    'atskills_suggest_model_vectors',
    'Skills with an embedding from the embeddings service',
    () => engine.status().vectors,
  );
  gauge(
    'atskills_suggest_model_related_pairs',
    'Related-term pairs mined from the index',
    () => engine.status().relatedPairs,
  );
  gauge('atskills_suggest_model_ready', '1 when the suggestion model serves, 0 while it builds', () =>
    engine.status().ready ? 1 : 0,
  );
  gauge(
    'atskills_suggest_model_build_seconds',
    'How long the last full build of the suggestion model took',
    () => engine.status().buildSeconds ?? 0,
  );
  gauge(
    'atskills_suggest_model_restore_seconds',
    'How long the suggestion model took to load from its stored snapshot at start (0 when it was built)',
    () => engine.status().restoreSeconds ?? 0,
  );
  gauge(
    'atskills_suggest_model_built_in_thread',
    '1 when the last build of the suggestion model ran in a worker thread (SUGGEST_BUILD_THREAD_MIN_SKILLS)',
    () => (engine.status().builtInThread ? 1 : 0),
  );
  gauge(
    'atskills_suggest_queued',
    'Suggestions waiting for their turn on this process (answered first come, first served): a queue that stays long wants another process',
    () => engine.status().queued,
  );
  gauge(
    'atskills_suggest_turn_ms',
    'What a suggestion turn takes lately (ms); times atskills_suggest_queued, the wait of the next caller (the deadline check of atskills-timeout-ms)',
    () => engine.status().turnMs,
  );
  gauge(
    'atskills_suggest_embeddings_up',
    '0 when the embeddings service failed last time it was asked (1 otherwise, or when none is set)',
    () => (engine.status().embeddingsError ? 0 : 1),
  );
}

/**
 * The first build in a worker thread (SUGGEST_BUILD_THREAD_MIN_SKILLS), when the hub runs on a Postgres
 * server with INDEX_SNAPSHOTS; the thread stores the model and the engine loads it.
 */
function buildThread(app: FastifyInstance, config: AppConfig): SuggestEngineOptions['buildElsewhere'] {
  const url = app.database.url;
  const minSkills = config.suggestBuildThreadMinSkills;
  // Without INDEX_SNAPSHOTS the engine never calls it (there is nothing to hand the model over through).
  if (!url || minSkills === 0) return undefined;
  return async (signal) => {
    const skills = await countSearchDocuments(app.db);
    if (skills < minSkills) return null;
    app.log.info({ skills }, 'suggestion model: building in a worker thread');
    const seconds = await buildModelInThread(
      { url, maxBytes: config.suggestModelBytes, embeddingTexts: Boolean(config.embeddings) },
      signal,
    );
    app.log.info({ skills, seconds }, 'suggestion model: built in a worker thread, loading it');
    return seconds;
  };
}

/**
 * The suggestion engine: its model is built from the index when the app is ready, once the in-memory search
 * index serves, follows the index change feed (like the search index), and retrieves lexically
 * through the app's search engine.
 */
export default fp(
  async function suggestPlugin(app: FastifyInstance, opts: SuggestPluginOptions) {
    const { config } = opts;
    const intake = new ConnectionIntake();
    intake.watch(app.server);
    const created = createSuggestEngine(app.db, app.searchEngine, {
      intake,
      maxBytes: config.suggestModelBytes,
      ...(config.embeddings ? { embeddings: config.embeddings } : {}),
      ...(config.suggestReranker ? { reranker: config.suggestReranker } : {}),
      // Meilisearch holds the same vectors when it indexes with the embeddings service: its hybrid search
      // gives the semantic list, the vectors held in memory answer while it cannot.
      ...(app.searchVectors ? { vectorSearch: app.searchVectors } : {}),
      // One build at a time on this event loop at start: the search index first (it serves sooner, and
      // suggestions read it), not waiting for its snapshot to be stored (6-9 s at 54,061 skills). A model
      // built in a worker thread meanwhile (buildThread) is loaded then.
      startAfter: app.searchIndexServes,
      onError: (err) => app.log.warn({ err }, 'suggestion model'),
      snapshots: config.indexSnapshots,
      onSnapshot: (event) => logSnapshot(app, 'suggestion model', event),
      buildElsewhere: buildThread(app, config),
    });
    // The engine the app serves is the one its own hooks drive too (so a test's spy on it sees them).
    const metered = app.hasDecorator('metrics');
    const engine = metered ? countOutcomes(app.metrics.registry, created) : created;
    app.addHook('onReady', async () => {
      engine.start((onEvent) => app.database.watchIndexChanges(onEvent));
    });
    // Writes through this process are seen at the next suggestion; a POST that only reads (config.readOnly:
    // /v1/suggest itself) is no write.
    app.addHook('onResponse', async (request, reply) => {
      if (wroteThroughThisProcess(request, reply)) engine.noteLocalWrite();
    });
    app.addHook('onClose', async () => engine.close());
    if (metered) reportModel(app, engine);
    app.decorate('suggestEngine', engine);
  },
  { name: 'atskills-suggest', dependencies: ['atskills-search'] },
);
