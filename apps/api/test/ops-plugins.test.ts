import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import Fastify, { type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import errorsPlugin from '../src/plugins/errors.js';
import healthPlugin from '../src/plugins/health.js';
import metricsPlugin, {
  crawlMetricsSink,
  createHubMetrics,
  instrumentSearchEngine,
} from '../src/plugins/metrics.js';
import queueBoardPlugin from '../src/plugins/queue-board.js';
import rateLimitPlugin from '../src/plugins/rate-limit.js';
import securityPlugin from '../src/plugins/security.js';
import opsRoutes from '../src/routes/ops/index.js';
import type { SearchEngine } from '../src/search/engine.js';
import type { Viewer } from '../src/services/auth/viewer.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A small app with the ops plugins the way app.ts wires them, plus one route to exercise them. */
async function opsApp(options: { rateLimitMax?: number; redis?: Redis } = {}): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  await app.register(errorsPlugin);
  // Stands in for the teams area's token auth: tests pick the viewer with a header.
  app.decorateRequest('viewer', null as unknown as Viewer);
  app.addHook('onRequest', async (request) => {
    const admin = request.headers['x-test-viewer'] === 'admin';
    const teamOwner = request.headers['x-test-viewer'] === 'team-owner';
    const member = request.headers['x-test-viewer'] === 'member';
    request.viewer = {
      userId: admin || member || teamOwner ? 1 : null,
      // A team owner holds an admin-scoped token without being a hub administrator.
      isAdmin: admin,
      scopes: admin || teamOwner ? ['read', 'admin'] : [],
      readableNamespaces: [],
      // A token the (stand-in) auth verified: its id keys the rate-limit bucket.
      tokenId: request.headers['x-test-token-id'] ? Number(request.headers['x-test-token-id']) : null,
    };
  });
  await app.register(metricsPlugin);
  await app.register(healthPlugin, { timeoutMs: 300 });
  await app.register(securityPlugin, { corsOrigins: ['*'], publicUrl: 'http://127.0.0.1:8080' });
  await app.register(rateLimitPlugin, {
    max: options.rateLimitMax ?? 0,
    timeWindow: '1 minute',
    ...(options.redis ? { redis: options.redis } : {}),
  });
  await app.register(opsRoutes);
  app.get('/things/:id', async (request, reply) => {
    const etag = '"rev1"';
    reply.header('etag', etag);
    if (request.headers['if-none-match'] === etag) return reply.code(304).send();
    return { id: (request.params as { id: string }).id, text: 'x'.repeat(4000) };
  });
  return app;
}

describe('metrics', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await opsApp();
  });
  afterAll(() => app.close());

  it('records request latency by route pattern and status, and cache validation outcomes', async () => {
    await app.inject('/things/a');
    await app.inject('/things/b');
    await app.inject({ url: '/things/c', headers: { 'if-none-match': '"rev1"' } });
    await app.inject({ url: '/things/d', headers: { 'if-none-match': '"old"' } });
    const text = (await app.inject('/metrics')).body;
    expect(text).toMatch(
      /atskills_http_request_duration_seconds_count\{method="GET",route="\/things\/:id",status="200"\} 3/,
    );
    expect(text).toMatch(
      /atskills_http_request_duration_seconds_count\{method="GET",route="\/things\/:id",status="304"\} 1/,
    );
    expect(text).toContain('atskills_cache_validations_total{outcome="304"} 1');
    expect(text).toContain('atskills_cache_validations_total{outcome="200"} 1');
    // Raw identities never become label values.
    expect(text).not.toContain('/things/a');
  });

  it('exposes search latency by engine, crawl jobs by outcome, queue depth and GitHub rate limit', async () => {
    const engine: SearchEngine = {
      name: 'meilisearch',
      search: async () => ({
        hits: [],
        nextCursor: null,
        engine: { name: 'postgres', fallback: 'outage' as const },
      }),
      index: async () => {},
      remove: async () => {},
      health: async () => ({ ok: true }),
    };
    const timed = instrumentSearchEngine(engine, app.metrics);
    await timed.search(
      'deploy',
      {},
      { userId: null, readableNamespaces: [], isAdmin: false } as never,
      20,
      undefined,
    );
    const sink = crawlMetricsSink(app.metrics);
    sink.crawlJob('indexed');
    sink.crawlJob('indexed');
    sink.crawlJob('failed');
    sink.githubRateLimit(4321);
    app.metrics.setQueueDepthSource('crawl', async () => ({ waiting: 7, active: 2 }));
    app.metrics.setQueueDepthSource('broken', async () => {
      throw new Error('redis down');
    });
    const response = await app.inject('/metrics');
    expect(response.headers['content-type']).toContain('text/plain');
    const text = response.body;
    expect(text).toContain('atskills_search_duration_seconds_count{engine="postgres-fallback"} 1');
    expect(text).toContain('atskills_crawl_jobs_total{outcome="indexed"} 2');
    expect(text).toContain('atskills_crawl_jobs_total{outcome="failed"} 1');
    expect(text).toContain('atskills_github_rate_limit_remaining{resource="core"} 4321');
    expect(text).toContain('atskills_queue_jobs{queue="crawl",state="waiting"} 7');
    expect(text).toContain('atskills_queue_jobs{queue="crawl",state="active"} 2');
    expect(text).not.toContain('queue="broken"');
    expect(text).toContain('atskills_process_cpu_seconds_total');
  });

  it('keeps one registry per app instance', () => {
    const a = createHubMetrics({ defaultMetrics: false });
    const b = createHubMetrics({ defaultMetrics: false });
    a.crawlJobs.inc({ outcome: 'indexed' });
    expect(a.registry).not.toBe(b.registry);
  });
});

describe('readiness', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await opsApp();
  });
  afterAll(() => app.close());

  it('answers /healthz while the process is up', async () => {
    const response = await app.inject('/healthz');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ status: 'up' });
  });

  it('is ready when every check is up and names each dependency', async () => {
    app.readiness.addCheck('database', async () => ({ mode: 'embedded' }));
    app.readiness.addCheck('search', async () => ({ engine: 'postgres' }));
    const response = await app.inject('/readyz');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      status: 'ready',
      checks: { database: { status: 'up', mode: 'embedded' }, search: { status: 'up', engine: 'postgres' } },
    });
  });

  it('answers 503 naming the dependency that is down, including one that hangs', async () => {
    app.readiness.addCheck('queue', async () => {
      throw new Error('connect ECONNREFUSED 127.0.0.1:1');
    });
    app.readiness.addCheck('search', () => new Promise(() => {}));
    const response = await app.inject('/readyz');
    expect(response.statusCode).toBe(503);
    const body = response.json();
    expect(body.status).toBe('not-ready');
    expect(body.checks.database.status).toBe('up');
    expect(body.checks.queue).toEqual({ status: 'down', error: 'connect ECONNREFUSED 127.0.0.1:1' });
    expect(body.checks.search).toEqual({ status: 'down', error: 'no answer within 300 ms' });
  });

  it('fails readiness once draining for shutdown', async () => {
    app.readiness.addCheck('queue', async () => undefined);
    app.readiness.addCheck('search', async () => undefined);
    expect((await app.inject('/readyz')).statusCode).toBe(200);
    app.readiness.drain();
    const response = await app.inject('/readyz');
    expect(response.statusCode).toBe(503);
    expect(response.json().checks.shutdown).toEqual({ status: 'down', error: 'shutting down' });
  });
});

describe('security headers, CORS and compression', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await opsApp();
  });
  afterAll(() => app.close());

  it('sends helmet headers without forcing https on a plain-http hub', async () => {
    const response = await app.inject('/things/a');
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['content-security-policy']).toContain("default-src 'self'");
    expect(response.headers['content-security-policy']).not.toContain('upgrade-insecure-requests');
    expect(response.headers['strict-transport-security']).toBeUndefined();
  });

  it('lets browser clients call the API and read its validators', async () => {
    const preflight = await app.inject({
      method: 'OPTIONS',
      url: '/things/a',
      headers: { origin: 'https://example.org', 'access-control-request-method': 'GET' },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe('*');
    const response = await app.inject({ url: '/things/a', headers: { origin: 'https://example.org' } });
    expect(response.headers['access-control-allow-origin']).toBe('*');
    expect(String(response.headers['access-control-expose-headers'])).toContain('etag');
  });

  it('compresses large JSON for clients that accept it', async () => {
    const response = await app.inject({ url: '/things/a', headers: { 'accept-encoding': 'gzip' } });
    expect(response.headers['content-encoding']).toBe('gzip');
    expect(response.rawPayload.length).toBeLessThan(4000);
  });
});

describe('rate limit', () => {
  it('answers 429 with Retry-After and RateLimit-* headers, per token or IP', async () => {
    const app = await opsApp({ rateLimitMax: 2 });
    try {
      const first = await app.inject('/things/a');
      expect(first.headers['ratelimit-limit']).toBe('2');
      expect(first.headers['ratelimit-remaining']).toBe('1');
      await app.inject('/things/a');
      const limited = await app.inject('/things/a');
      expect(limited.statusCode).toBe(429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(limited.headers['ratelimit-limit']).toBe('2');
      expect(limited.headers['ratelimit-remaining']).toBe('0');
      expect(limited.headers['content-type']).toContain('application/problem+json');
      expect(limited.json()).toMatchObject({ status: 429, code: 'rate-limited', limit: 2 });
      // A verified token counts on its own, whatever IP it comes from; an unverified bearer string does not
      // get a bucket of its own (it counts against its IP).
      const withToken = await app.inject({ url: '/things/a', headers: { 'x-test-token-id': '7' } });
      expect(withToken.statusCode).toBe(200);
      const madeUp = await app.inject({ url: '/things/a', headers: { authorization: 'Bearer ask_one' } });
      expect(madeUp.statusCode).toBe(429);
      // Probes are never limited.
      expect((await app.inject('/healthz')).statusCode).toBe(200);
      expect((await app.inject('/metrics')).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('shares counters through Redis across instances', async () => {
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    const token = `ask_${randomBytes(8).toString('hex')}`;
    const one = await opsApp({ rateLimitMax: 2, redis });
    const two = await opsApp({ rateLimitMax: 2, redis });
    try {
      // A token id of its own per run: the counters live in the shared Redis.
      const tokenId = String(1_000_000 + randomBytes(3).readUIntBE(0, 3));
      const headers = { authorization: `Bearer ${token}`, 'x-test-token-id': tokenId };
      expect((await one.inject({ url: '/things/a', headers })).statusCode).toBe(200);
      expect((await two.inject({ url: '/things/a', headers })).statusCode).toBe(200);
      expect((await one.inject({ url: '/things/a', headers })).statusCode).toBe(429);
      // The token itself never reaches Redis, only its id.
      expect(await redis.keys(`*${token}*`)).toEqual([]);
    } finally {
      await one.close();
      await two.close();
      redis.disconnect();
    }
  });
});

describe('queue dashboard', () => {
  let app: FastifyInstance;
  let queue: Queue;
  beforeAll(async () => {
    app = await opsApp();
    queue = new Queue(`ops-board-${randomBytes(4).toString('hex')}`, { connection: { url: REDIS_URL } });
    await app.register(queueBoardPlugin, { queues: [queue], prefix: '/admin/queues' });
  });
  afterAll(async () => {
    await app.close();
    await queue.obliterate({ force: true });
    await queue.close();
  });

  it('refuses anonymous callers and non-admins with problems', async () => {
    const anonymous = await app.inject('/admin/queues');
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json()).toMatchObject({ code: 'unauthorized' });
    const member = await app.inject({
      url: '/admin/queues/api/queues',
      headers: { 'x-test-viewer': 'member' },
    });
    expect(member.statusCode).toBe(403);
    expect(member.json()).toMatchObject({ code: 'forbidden' });
    // An admin-scoped token of someone who is not a hub administrator (a team owner) may not pause the
    // queues or add jobs: the same rule as POST /v1/crawls.
    const pause = await app.inject({
      method: 'PUT',
      url: '/admin/queues/api/queues/pause',
      headers: { 'x-test-viewer': 'team-owner' },
    });
    expect(pause.statusCode).toBe(403);
    expect(await queue.isPaused()).toBe(false);
  });

  it('serves the dashboard and its queue list to an admin token', async () => {
    const page = await app.inject({ url: '/admin/queues', headers: { 'x-test-viewer': 'admin' } });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    const list = await app.inject({ url: '/admin/queues/api/queues', headers: { 'x-test-viewer': 'admin' } });
    expect(list.statusCode).toBe(200);
    expect(JSON.stringify(list.json())).toContain(queue.name);
  });
});
