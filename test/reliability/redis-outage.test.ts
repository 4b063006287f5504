/**
 * Issue 8, faults: "Stop Redis: search, resolution and publishing keep working; crawling pauses and
 * resumes when Redis is back, losing no job." The hub is started the way `npm start` starts it
 * (runtime/start.ts startHub: Redis rate-limit counters, BullMQ queue) and a crawler worker runs beside
 * it; both reach Redis through a TCP proxy this test cuts, so the machine's Redis keeps serving others.
 */
import { randomBytes } from 'node:crypto';
import { type Crawler, createCrawler } from '@atskills/crawler';
import { recentCrawlRuns } from '@atskills/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningHub, startHub } from '../../apps/api/src/runtime/start.js';
import { seedTeam } from '../../apps/api/test/teams-fixtures.js';
import { packCollection, skillMd } from '../fixtures/archives/make.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { pushPayload, webhookRepository, webhookRequest } from '../support/github-webhooks.js';
import { startTcpProxy, type TcpProxy, upstreamOf } from '../support/tcp-proxy.js';
import {
  byStatus,
  crawlerSettings,
  crawlInProcess,
  expectCrawledOnce,
  firstRepositoryDone,
  runLoad,
  type SkillRepos,
  startSkillRepos,
} from './helpers.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const REQUEST_TIMEOUT_MS = 15_000;
// Repositories 0-1 are indexed up front (what search and resolution serve); 2-5 are crawled through BullMQ.
const SEEDED = ['relia-org/repo-0', 'relia-org/repo-1'];
const QUEUED = ['relia-org/repo-2', 'relia-org/repo-3', 'relia-org/repo-4', 'relia-org/repo-5'];
const CONCURRENCY = 1;
const WEBHOOK_SECRET = 'whsec-relia-0123456789abcdef';

let db: TestDatabase;
let repos: SkillRepos;
let proxy: TcpProxy;
let hub: RunningHub;
let worker: Crawler | undefined;
let baseUrl: string;
// Own key prefix: other test files use the same Redis at the same time.
const prefix = `relia-${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  db = await createTestDatabase('redis_outage');
  repos = await startSkillRepos(SEEDED.length + QUEUED.length);
  await crawlInProcess(db.db, repos, SEEDED);
  proxy = await startTcpProxy(upstreamOf(REDIS_URL));
  hub = await startHub({
    env: {
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'silent',
      DATABASE_URL: db.url,
      REDIS_URL: proxy.rewrite(REDIS_URL),
      CRAWL_QUEUE_PREFIX: prefix,
      GITHUB_API_URL: repos.standin.apiUrl,
      GIT_BASE_URL: repos.standin.gitUrl,
      // Rate limiting on, high enough never to refuse this test: the point is that its Redis store is in the path.
      RATE_LIMIT_MAX: '100000',
      RECRAWL_TICK_MS: '0',
      GITHUB_WEBHOOK_SECRET: WEBHOOK_SECRET,
      SHUTDOWN_TIMEOUT_MS: '2000',
    },
  });
  baseUrl = hub.url;
});

afterAll(async () => {
  await proxy?.restore();
  await worker?.close({ deadlineMs: 2_000 });
  await hub?.shutdown('test over');
  await proxy?.close();
  await repos?.close();
  await db?.drop();
});

const READ_PATHS = [
  '/search?q=deploy',
  '/v1/skills/gh:relia-org/repo-0/skills/deploy-0',
  '/v1/archive/gh:relia-org/repo-1/skills/review-1',
  '/v1/skills/gh:relia-org/repo-1/skills',
];

async function batchResolve(): Promise<number> {
  const res = await fetch(`${baseUrl}/v1/resolve`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      items: [
        { identity: 'gh:relia-org/repo-0/skills/deploy-0' },
        { identity: 'gh:relia-org/repo-1/skills/review-1' },
      ],
    }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  await res.arrayBuffer();
  return res.status;
}

describe('Redis outage', () => {
  it('with Redis up, requests are counted in the Redis rate-limit store', async () => {
    const first = await fetch(`${baseUrl}/search?q=deploy`);
    const second = await fetch(`${baseUrl}/search?q=deploy`);
    await Promise.all([first.text(), second.text()]);
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-limit')).toBe('100000');
    expect(Number(second.headers.get('ratelimit-remaining'))).toBeLessThan(
      Number(first.headers.get('ratelimit-remaining')),
    );
    expect(proxy.open).toBeGreaterThan(0);
  });

  it('search, resolution, archives and batch resolve keep answering while Redis is cut (rate limit fails open)', async () => {
    await proxy.cut('refuse');
    try {
      const samples = await runLoad(baseUrl, READ_PATHS, {
        requests: 40,
        concurrency: 4,
        timeoutMs: REQUEST_TIMEOUT_MS,
      });
      expect(byStatus(samples)).toEqual({ 200: 40 });
      const probes = await runLoad(baseUrl, READ_PATHS.slice(1, 2), {
        requests: 4,
        concurrency: 2,
        timeoutMs: REQUEST_TIMEOUT_MS,
        method: 'HEAD',
      });
      expect(byStatus(probes)).toEqual({ 200: 4 });
      expect(await batchResolve()).toBe(200);
    } finally {
      await proxy.restore();
    }
  });

  it('publishing a collection keeps working while Redis is cut', async () => {
    const tokens = await seedTeam(db.db, 'relia');
    const archive = packCollection({
      'runbook/SKILL.md': skillMd('runbook', 'Runbook published while Redis is down'),
      'runbook/steps.md': '1. check\n2. act\n',
    });
    await proxy.cut('refuse');
    try {
      const res = await fetch(`${baseUrl}/v1/collections/relia/ops?visibility=public`, {
        method: 'PUT',
        headers: { 'content-type': 'application/gzip', authorization: `Bearer ${tokens.publisher}` },
        body: new Uint8Array(archive),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const answer = (await res.json()) as { identity: string; revision: string; skills: string[] };
      expect(res.status, JSON.stringify(answer)).toBeLessThan(300);
      expect(answer.skills).toContain('hub:relia/ops/runbook');
      const skill = await fetch(`${baseUrl}/v1/skills/hub:relia/ops/runbook`, {
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      expect(skill.status).toBe(200);
      expect(((await skill.json()) as { description: string }).description).toBe(
        'Runbook published while Redis is down',
      );
    } finally {
      await proxy.restore();
    }
  });

  it('answers an index request 503 with Retry-After while Redis is cut, leaving no run or request open', async () => {
    const requestIndexing = () =>
      fetch(`${baseUrl}/v1/index-requests`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ repo: 'relia-org/not-yet-indexed' }),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    await proxy.cut('refuse');
    try {
      const started = Date.now();
      const res = await requestIndexing();
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(((await res.json()) as { code: string }).code).toBe('unavailable');
      expect(Date.now() - started).toBeLessThan(REQUEST_TIMEOUT_MS);
      // The run it opened has ended, so the next request starts a crawl instead of joining a dead one.
      expect((await recentCrawlRuns(db.db, 20)).filter((run) => run.status === 'running')).toEqual([]);
    } finally {
      await proxy.restore();
    }
    const again = await requestIndexing();
    expect(again.status).toBe(202);
    expect(((await again.json()) as { started: boolean }).started).toBe(true);
  });

  it('answers a push delivered while Redis is cut 503, and handles its redelivery once Redis is back', async () => {
    // A repository the hub knows (its push is no new name): the delivery must queue a re-crawl.
    const delivery = webhookRequest(
      WEBHOOK_SECRET,
      'push',
      pushPayload(webhookRepository('relia-org/repo-1')),
    );
    const post = () =>
      fetch(`${baseUrl}/v1/webhooks/github`, {
        method: 'POST',
        headers: delivery.headers,
        body: delivery.body,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    await proxy.cut('refuse');
    try {
      expect((await post()).status).toBe(503);
    } finally {
      await proxy.restore();
    }
    // GitHub redelivers the same delivery (same id, same body): handled, not a duplicate.
    const again = await post();
    expect(again.status).toBe(202);
    expect(((await again.json()) as { outcome: string }).outcome).toBe('queued');
  });

  it('a crawl cut off from Redis mid-way pauses, then resumes and indexes every repository exactly once', async () => {
    worker = createCrawler({
      db: db.db,
      settings: crawlerSettings(repos.standin, {
        CRAWL_QUEUE_PREFIX: prefix,
        CRAWL_CONCURRENCY: CONCURRENCY,
        // A job whose worker lost Redis mid-job is handed out again once its lock lapses: keep that short here.
        CRAWL_LOCK_DURATION_MS: 4_000,
      }),
      redis: proxy.rewrite(REDIS_URL),
      work: true,
    });
    // Slow git answers keep the crawl in progress long enough to cut it in the middle.
    repos.standin.git.setDelay(150);
    const producer = hub.app.queue as Crawler;
    const runId = await producer.startRun({ kind: 'repos', source: { kind: 'repos', repos: QUEUED } });

    const progress = await firstRepositoryDone(producer, runId);
    await proxy.cut('refuse');
    const doneAtCut = progress?.repositoriesDone ?? 0;
    // The cut must land mid-crawl for this test to mean anything.
    expect(doneAtCut).toBeLessThan(QUEUED.length);

    // While Redis is down no new job can start: at most the jobs already running finish their database work.
    await new Promise((r) => setTimeout(r, 2_000));
    const duringCut = await producer.progress(runId);
    expect(duringCut?.repositoriesDone ?? 0).toBeLessThanOrEqual(doneAtCut + CONCURRENCY);
    expect(duringCut?.status).toBe('running');
    // The API still answers searches meanwhile.
    expect(
      byStatus(
        await runLoad(baseUrl, ['/search?q=review'], {
          requests: 4,
          concurrency: 2,
          timeoutMs: REQUEST_TIMEOUT_MS,
        }),
      ),
    ).toEqual({ 200: 4 });

    await proxy.restore();
    repos.standin.git.setDelay(0);
    await expectCrawledOnce(db.db, producer, runId, QUEUED);
    // And search finds them, once the in-memory index has applied the change feed (debounced, so a
    // search sent the instant the run finishes may still be a moment behind).
    await expect
      .poll(
        async () => {
          const found = await fetch(`${baseUrl}/search?q=deploy-5`).then(
            (r) => r.json() as Promise<{ results: { identity: string }[] }>,
          );
          return found.results.map((r) => r.identity);
        },
        { timeout: 10_000, interval: 100 },
      )
      .toContain('gh:relia-org/repo-5/skills/deploy-5');
  });
});
