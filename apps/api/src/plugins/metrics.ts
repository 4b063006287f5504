import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { SearchEngine } from '../search/engine.js';

/** Queue job counts by state, as BullMQ's `getJobCounts()` (or the in-process queue) reports them. */
export type QueueDepth = Record<string, number>;

/**
 * The hub's Prometheus series, in a registry of their own: one per app instance, so several apps in one
 * process (tests, the embedded crawler beside the API) never collide in prom-client's global registry.
 */
export interface HubMetrics {
  registry: Registry;
  httpRequestDuration: Histogram<'method' | 'route' | 'status'>;
  searchDuration: Histogram<'engine'>;
  cacheValidations: Counter<'outcome'>;
  crawlJobs: Counter<'outcome'>;
  queueDepth: Gauge<'queue' | 'state'>;
  githubRateLimitRemaining: Gauge<'resource'>;
  /** Registers where the queue depth gauge reads from at scrape time (one source per queue name). */
  setQueueDepthSource(queue: string, source: () => Promise<QueueDepth>): void;
  /**
   * Makes the crawl job counter read its totals at scrape time (from Postgres: every worker's jobs, whichever
   * process ran them) instead of counting this process's jobs.
   */
  setCrawlOutcomeSource(source: () => Promise<Record<string, number>>): void;
  /** The exposition `/metrics` serves: this registry's, or every cluster worker's (see setScrape). */
  scrape(): Promise<string>;
  /** Replaces what `scrape` reads (a cluster worker asks the primary for all workers' series). */
  setScrape(source: () => Promise<string>): void;
}

/** What the crawler feeds; plain functions so the crawler needs no prom-client types. */
export interface CrawlMetricsSink {
  /** One finished repository job: indexed | unchanged | failed | gone | ... */
  crawlJob(outcome: string): void;
  /** The `x-ratelimit-remaining` GitHub reported last, per resource (core, search, graphql). */
  githubRateLimit(remaining: number, resource?: string): void;
}

/** Creates the hub's metric series in a fresh registry (process metrics included unless disabled). */
export function createHubMetrics(options: { defaultMetrics?: boolean } = {}): HubMetrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'atskills_' });
  const queueSources = new Map<string, () => Promise<QueueDepth>>();
  let crawlOutcomeSource: (() => Promise<Record<string, number>>) | undefined;
  let scrapeSource = () => registry.metrics();

  const queueDepth = new Gauge({
    name: 'atskills_queue_jobs',
    help: 'Jobs in the crawl queue by state (waiting, active, delayed, failed, ...), read at scrape time',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      for (const [queue, source] of queueSources) {
        // A queue that cannot be read (Redis down) leaves its series out instead of failing the scrape.
        const counts = await source().catch(() => undefined);
        for (const [state, n] of Object.entries(counts ?? {})) this.set({ queue, state }, n);
      }
    },
  });

  return {
    registry,
    httpRequestDuration: new Histogram({
      name: 'atskills_http_request_duration_seconds',
      help: 'HTTP request latency by route pattern and status code',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    searchDuration: new Histogram({
      name: 'atskills_search_duration_seconds',
      help: 'Search latency by engine (postgres, meilisearch)',
      labelNames: ['engine'] as const,
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    cacheValidations: new Counter({
      name: 'atskills_cache_validations_total',
      help: 'Conditional requests (If-None-Match) by outcome: 304 (still valid) or 200 (changed)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    crawlJobs: new Counter({
      name: 'atskills_crawl_jobs_total',
      help: 'Finished repository crawl jobs by outcome',
      labelNames: ['outcome'] as const,
      registers: [registry],
      async collect() {
        if (!crawlOutcomeSource) return;
        const totals = await crawlOutcomeSource().catch(() => undefined);
        if (!totals) return;
        this.reset();
        for (const [outcome, n] of Object.entries(totals)) this.inc({ outcome }, n);
      },
    }),
    queueDepth,
    githubRateLimitRemaining: new Gauge({
      name: 'atskills_github_rate_limit_remaining',
      help: 'Requests left in the current GitHub rate-limit window, as GitHub last reported',
      labelNames: ['resource'] as const,
      registers: [registry],
    }),
    setQueueDepthSource(queue, source) {
      queueSources.set(queue, source);
    },
    setCrawlOutcomeSource(source) {
      crawlOutcomeSource = source;
    },
    scrape: () => scrapeSource(),
    setScrape(source) {
      scrapeSource = source;
    },
  };
}

/** The crawler-facing view of the metrics. */
export function crawlMetricsSink(metrics: HubMetrics): CrawlMetricsSink {
  return {
    crawlJob: (outcome) => metrics.crawlJobs.inc({ outcome }),
    githubRateLimit: (remaining, resource = 'core') =>
      metrics.githubRateLimitRemaining.set({ resource }, remaining),
  };
}

/**
 * Wraps a search engine so every query lands in the search latency histogram, labelled with the engine
 * that actually answered (a Meilisearch fallback shows up as `postgres`).
 */
export function instrumentSearchEngine(engine: SearchEngine, metrics: HubMetrics): SearchEngine {
  return {
    name: engine.name,
    async search(...args) {
      const started = performance.now();
      let label = engine.name;
      try {
        const page = await engine.search(...args);
        label = page.engine.fallback === 'outage' ? `${page.engine.name}-fallback` : page.engine.name;
        return page;
      } finally {
        metrics.searchDuration.observe({ engine: label }, (performance.now() - started) / 1000);
      }
    },
    index: (identities) => engine.index(identities),
    remove: (identities) => engine.remove(identities),
    health: () => engine.health(),
    ...(engine.close ? { close: () => engine.close!() } : {}),
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    metrics: HubMetrics;
  }
}

/** The route label: the route pattern, never the raw URL, so identities do not explode the series count. */
function routeLabel(request: FastifyRequest): string {
  return request.routeOptions.url ?? 'unmatched';
}

function observe(metrics: HubMetrics, request: FastifyRequest, reply: FastifyReply): void {
  const status = String(reply.statusCode);
  metrics.httpRequestDuration.observe(
    { method: request.method, route: routeLabel(request), status },
    reply.elapsedTime / 1000,
  );
  // Every conditional GET/HEAD is a cache's revision probe; 304 = its copy is current, 200 = it changed.
  if (request.headers['if-none-match'] && (status === '200' || status === '304')) {
    metrics.cacheValidations.inc({ outcome: status });
  }
}

/** Decorates `app.metrics` and records every request's latency and cache validation outcome. */
export default fp(
  async function metricsPlugin(app: FastifyInstance, options: { metrics?: HubMetrics }) {
    const metrics = options.metrics ?? createHubMetrics();
    app.decorate('metrics', metrics);
    app.addHook('onResponse', async (request, reply) => observe(metrics, request, reply));
  },
  { name: 'atskills-metrics' },
);
