// A GitHub rate-limit answer (403 secondary limit or 429, with Retry-After) delays jobs; it never fails them.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { jobIds, QUEUES } from '@atskills/queue';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRepo } from '../../../test/support/corpus.js';
import { dropQueuePrefix, redisUrl, uniqueQueuePrefix } from '../../../test/support/redis.js';
import { type Crawler, createCrawler } from '../src/crawler.js';
import { type CrawlFixture, liveSkills, startCrawlFixture, testLogger } from './crawl-fixture.js';

const ok = (name: string) => `---\nname: ${name}\ndescription: A fine skill.\n---\nbody\n`;
// Longer than the client waits in-process (5 s), so the job itself must be delayed.
const RETRY_AFTER_S = 6;

let root: string;
let fx: CrawlFixture;
let redis: string;
let crawler: Crawler;
const prefix = uniqueQueuePrefix('ratelimit');

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'atskills-ratelimit-'));
  await createRepo(root, 'limits/one', { 'a/SKILL.md': ok('a') });
  await createRepo(root, 'limits/two', { 'b/SKILL.md': ok('b') });
  redis = await redisUrl();
  fx = await startCrawlFixture('ratelimit', root);
  crawler = createCrawler({
    db: fx.db.db,
    // One attempt only: a rate limit that used up an attempt would fail the job.
    settings: fx.settings({
      REDIS_URL: redis,
      CRAWL_QUEUE_PREFIX: prefix,
      CRAWL_ATTEMPTS: 1,
      CRAWL_CONCURRENCY: 2,
    }),
    logger: testLogger,
  });
}, 120_000);

afterAll(async () => {
  await crawler?.close();
  await fx?.close();
  await dropQueuePrefix(redis, prefix);
  await rm(root, { recursive: true, force: true });
});

describe.each([
  { status: 429 as const, label: '429 Too Many Requests' },
  { status: 403 as const, label: '403 secondary rate limit' },
])('a $label with Retry-After', ({ status }) => {
  it('delays the jobs until the limit lifts, then indexes them', async () => {
    const before = fx.standin.apiLog.length;
    fx.standin.rateLimitNext({ status, retryAfter: RETRY_AFTER_S, times: 2, pathPrefix: '/repos' });
    const started = Date.now();
    const runId = await crawler.startRun({
      kind: 'repos',
      source: { kind: 'repos', repos: ['limits/one', 'limits/two'] },
      force: true,
    });
    const run = await crawler.waitForRun(runId, { pollMs: 100 });
    expect(run.outcomes).toMatchObject({ indexed: 2, failed: 0 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(RETRY_AFTER_S * 1000);
    const answers = fx.standin.apiLog.slice(before).filter((e) => e.path.startsWith('/repos'));
    expect(answers.filter((e) => e.status === status)).toHaveLength(2);
    expect(answers.filter((e) => e.status === 200 || e.status === 304).length).toBeGreaterThanOrEqual(2);
    const queue = new Queue(QUEUES.repository.name, { connection: { url: redis }, prefix });
    try {
      for (const repo of ['one', 'two']) {
        const job = await queue.getJob(jobIds.repository(runId, 'limits', repo));
        // The run is finished once its reports are written; the job is marked a moment later.
        let state = await job?.getState();
        while (state === 'active') {
          await new Promise((r) => setTimeout(r, 50));
          state = await job?.getState();
        }
        expect(state).toBe('completed');
        // Re-read the finished job: with one attempt allowed, a rate-limited delivery that counted as an
        // attempt would have failed it. (attemptsMade is not asserted: BullMQ updates it after the state, so
        // reading it right at completion races.)
        const finished = await queue.getJob(jobIds.repository(runId, 'limits', repo));
        expect(finished?.finishedOn).toBeTypeOf('number');
        expect(finished?.failedReason ?? '').toBe('');
      }
    } finally {
      await queue.close();
    }
    expect([...(await liveSkills(fx.db, 'limits', 'one')).keys()]).toEqual(['a']);
  }, 120_000);
});
