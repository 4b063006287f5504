// Redis is shared transport: a job written to a crawl queue by anything but the registry's producers must be
// refused by the workers (parsed with the registry's schema), failed at once and never retried or run.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { crawlReports, repositories } from '@atskills/db';
import { QUEUES } from '@atskills/queue';
import { type Job, Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropQueuePrefix, redisUrl, uniqueQueuePrefix } from '../../../test/support/redis.js';
import { type Crawler, createCrawler } from '../src/crawler.js';
import { type CrawlFixture, startCrawlFixture, testLogger } from './crawl-fixture.js';

let root: string;
let fx: CrawlFixture;
let redis: string;
let crawler: Crawler;
const prefix = uniqueQueuePrefix('injected');

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'atskills-injected-'));
  redis = await redisUrl();
  fx = await startCrawlFixture('injected', root);
  crawler = createCrawler({
    db: fx.db.db,
    settings: fx.settings({ REDIS_URL: redis, CRAWL_QUEUE_PREFIX: prefix, CRAWL_ATTEMPTS: 4 }),
    logger: testLogger,
  });
}, 120_000);

afterAll(async () => {
  await crawler?.close();
  await fx?.close();
  await dropQueuePrefix(redis, prefix);
  await rm(root, { recursive: true, force: true });
});

async function settled(job: Job): Promise<string> {
  for (;;) {
    const state = await job.getState();
    if (state === 'failed' || state === 'completed') return state;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('a job injected into Redis', () => {
  it.each([
    ['repository', { runId: null, owner: '../../etc', repo: 'passwd' }],
    ['repository', { runId: 1, owner: 'o', repo: '..', force: 'yes' }],
    ['discover', { runId: 1, source: { kind: 'shell', command: 'id' } }],
  ] as const)('on the %s queue is refused without an attempt to run it', async (key, data) => {
    const queue = new Queue(QUEUES[key].name, { connection: { url: redis }, prefix });
    try {
      const job = await queue.add('injected', data, { attempts: 4, backoff: { type: 'fixed', delay: 10 } });
      expect(await settled(job)).toBe('failed');
      const failed = await queue.getJob(job.id!);
      expect(failed?.failedReason).toMatch(new RegExp(`Refused a ${QUEUES[key].name} job`));
      // UnrecoverableError: one attempt, not four.
      expect(failed?.attemptsMade).toBe(1);
    } finally {
      await queue.close();
    }
    expect(await fx.db.db.select().from(repositories)).toEqual([]);
    expect(await fx.db.db.select().from(crawlReports)).toEqual([]);
  });
});
