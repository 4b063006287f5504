// A repository job whose workers die holding it more often than BullMQ's stall limit (maxStalledCount 2)
// is failed by the next worker without running again: the crawler must still record it and finish the
// run, which otherwise waits for ever for a report nobody writes. The job is held here the way a dying
// worker holds it (test/support/stalled-jobs.ts).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { crawlReportsOfRun, createCrawlRun } from '@atskills/db';
import { jobIds, jobOptions, QUEUES } from '@atskills/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRepo } from '../../../test/support/corpus.js';
import { dropQueuePrefix, redisUrl, uniqueQueuePrefix } from '../../../test/support/redis.js';
import { stallPastLimit } from '../../../test/support/stalled-jobs.js';
import { type Crawler, createCrawler } from '../src/crawler.js';
import { type CrawlFixture, startCrawlFixture, testLogger } from './crawl-fixture.js';

let root: string;
let fx: CrawlFixture;
let redis: string;
let crawler: Crawler | undefined;
const prefix = uniqueQueuePrefix('abandoned');

beforeAll(async () => {
  redis = await redisUrl();
  root = await mkdtemp(path.join(tmpdir(), 'atskills-abandoned-'));
  await createRepo(root, 'stall/skills', {
    'deploy/SKILL.md': '---\nname: deploy\ndescription: Deploys the service.\n---\nSteps.\n',
  });
  fx = await startCrawlFixture('abandoned', root);
}, 120_000);

afterAll(async () => {
  await crawler?.close();
  await fx?.close();
  await dropQueuePrefix(redis, prefix);
  await rm(root, { recursive: true, force: true });
});

describe('a repository job stalled past the limit', () => {
  it('is recorded as failed (crawl-abandoned) and its run finishes', async () => {
    const settings = fx.settings({ REDIS_URL: redis, CRAWL_QUEUE_PREFIX: prefix });
    const runId = await createCrawlRun(fx.db.db, { kind: 'repos', repositoriesTotal: 1 });
    const data = { runId, owner: 'stall', repo: 'skills', force: false };
    await stallPastLimit(redis, prefix, QUEUES.repository.name, async (queue) => {
      await queue.add('crawl', data, {
        ...jobOptions('repository', settings),
        jobId: jobIds.repository(runId, data.owner, data.repo),
      });
      return 1;
    });

    crawler = createCrawler({ db: fx.db.db, settings, logger: testLogger });
    const done = await crawler.waitForRun(runId, { pollMs: 100 });
    expect(done).toMatchObject({ status: 'finished', repositoriesDone: 1, outcomes: { failed: 1 } });
    const [report] = await crawlReportsOfRun(fx.db.db, runId);
    expect(report!.report.errors).toEqual([
      {
        path: '',
        code: 'crawl-abandoned',
        message: 'The crawl job ended without a result: job stalled more than allowable limit',
      },
    ]);
  }, 60_000);
});

describe('a discovery whose last attempt fails', () => {
  it('ends its run failed', async () => {
    crawler ??= createCrawler({
      db: fx.db.db,
      settings: fx.settings({ REDIS_URL: redis, CRAWL_QUEUE_PREFIX: prefix }),
      logger: testLogger,
    });
    // An owner GitHub does not know: listing its repositories fails at every attempt.
    const runId = await crawler.startRun({ kind: 'org', source: { kind: 'org', name: 'nobody-owns-this' } });
    const done = await crawler.waitForRun(runId, { pollMs: 100 });
    expect(done.status).toBe('failed');
    expect(done.repositoriesDone).toBe(0);
  }, 60_000);
});
