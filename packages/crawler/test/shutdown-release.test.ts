// A worker stopped (SIGTERM) while a crawl job is still running past the shutdown deadline aborts the job
// and puts it back in the queue as it was: no attempt spent, the run still running, and the next worker
// crawls it. Before, the abort counted as a failed attempt, and on the last attempt the job failed for good
// while the worker closed under the record of it, leaving the run `running`.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { crawlRunProgress } from '@atskills/db';
import { jobIds, QUEUES } from '@atskills/queue';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRepo } from '../../../test/support/corpus.js';
import { eventually } from '../../../test/support/eventually.js';
import { dropQueuePrefix, redisUrl, uniqueQueuePrefix } from '../../../test/support/redis.js';
import { type Crawler, createCrawler } from '../src/crawler.js';
import { type CrawlFixture, startCrawlFixture, testLogger } from './crawl-fixture.js';

let root: string;
let fx: CrawlFixture;
let redis: string;
let queue: Queue;
const crawlers: Crawler[] = [];
const prefix = uniqueQueuePrefix('release');

beforeAll(async () => {
  redis = await redisUrl();
  root = await mkdtemp(path.join(tmpdir(), 'atskills-release-'));
  await createRepo(root, 'slow/skills', {
    'deploy/SKILL.md': '---\nname: deploy\ndescription: Deploys the service.\n---\nSteps.\n',
  });
  fx = await startCrawlFixture('release', root);
  queue = new Queue(QUEUES.repository.name, { connection: { url: redis }, prefix });
}, 120_000);

afterAll(async () => {
  await queue?.close();
  for (const crawler of crawlers) await crawler.close({ deadlineMs: 100 }).catch(() => {});
  await fx?.close();
  await dropQueuePrefix(redis, prefix);
  await rm(root, { recursive: true, force: true });
});

describe('a worker stopped while its job runs past the deadline', () => {
  it('releases the job without spending an attempt, and the next worker crawls it', async () => {
    // One attempt: were the abort counted, the job would fail for good at once.
    const settings = fx.settings({ REDIS_URL: redis, CRAWL_QUEUE_PREFIX: prefix, CRAWL_ATTEMPTS: 1 });
    fx.standin.setGitFault('slow/skills', { kind: 'hang' });
    const first = createCrawler({ db: fx.db.db, settings, logger: testLogger });
    crawlers.push(first);
    const runId = await first.startRun({ kind: 'repos', source: { kind: 'repos', repos: ['slow/skills'] } });
    const jobId = jobIds.repository(runId, 'slow', 'skills');
    await eventually(async () => (await (await queue.getJob(jobId))?.getState()) === 'active', 30_000);

    await first.close({ deadlineMs: 300 });
    const released = await queue.getJob(jobId);
    expect(await released?.getState()).toMatch(/^(delayed|waiting)$/);
    expect(released?.attemptsMade).toBe(0);
    expect((await crawlRunProgress(fx.db.db, runId))?.status).toBe('running');

    fx.standin.setGitFault('slow/skills', null);
    const second = createCrawler({ db: fx.db.db, settings, logger: testLogger });
    crawlers.push(second);
    const done = await second.waitForRun(runId, { pollMs: 100 });
    expect(done).toMatchObject({ status: 'finished', repositoriesDone: 1, outcomes: { indexed: 1 } });
  }, 90_000);
});
