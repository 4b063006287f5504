/**
 * Postgres stops answering in the middle of a crawl (a hung server or a lost network path: open connections
 * go silent, new ones are never answered) and comes back: the crawler worker retries what failed (two
 * attempts did, in the runs that checked, on the queries of the jobs then running), every repository is
 * indexed exactly once, and the worker's connection pool is whole afterwards (every connection given back,
 * a further crawl runs). The worker reaches Postgres through a TCP proxy this test cuts; the run is started
 * and watched on a direct connection, as the hub would.
 */
import { randomBytes } from 'node:crypto';
import { type Crawler, createCrawler } from '@atskills/crawler';
import type { DatabaseHandle } from '@atskills/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectThroughProxy, createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTcpProxy, type TcpProxy, upstreamOf } from '../support/tcp-proxy.js';
import {
  crawlerSettings,
  expectCrawledOnce,
  firstRepositoryDone,
  type SkillRepos,
  startSkillRepos,
} from './helpers.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const FIRST = ['relia-org/repo-0', 'relia-org/repo-1', 'relia-org/repo-2', 'relia-org/repo-3'];
const LATER = ['relia-org/repo-4'];
/** How long Postgres stays silent: the worker's hung queries fail when it is back (the proxy resets them). */
const OUTAGE_MS = 2_000;

let db: TestDatabase;
let repos: SkillRepos;
let proxy: TcpProxy;
let workerDatabase: DatabaseHandle;
let producer: Crawler;
let worker: Crawler;
// Own key prefix: other test files use the same Redis at the same time.
const prefix = `relia-pg-${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  db = await createTestDatabase('crawler_pg_outage');
  repos = await startSkillRepos(FIRST.length + LATER.length);
  proxy = await startTcpProxy(upstreamOf(db.url));
  // A small pool: a connection the outage left checked out would soon leave the worker with none.
  workerDatabase = connectThroughProxy(proxy, db.url, { statementTimeoutMs: 10_000 });
  const settings = crawlerSettings(repos.standin, {
    CRAWL_QUEUE_PREFIX: prefix,
    CRAWL_CONCURRENCY: 2,
    // Retries (200 ms doubled) that outlast the outage: 200 + 400 + ... + 3,200 ms.
    CRAWL_ATTEMPTS: 6,
  });
  producer = createCrawler({ db: db.db, settings, redis: REDIS_URL, work: false });
  worker = createCrawler({ db: workerDatabase.db, settings, redis: REDIS_URL, work: true });
});

afterAll(async () => {
  await proxy?.restore();
  await worker?.close({ deadlineMs: 2_000 });
  await producer?.close({ deadlineMs: 2_000 });
  await workerDatabase?.close();
  await proxy?.close();
  await repos?.close();
  await db?.drop();
});

describe('Postgres outage during a crawl', () => {
  it('retries what failed, indexes every repository once, and leaves the worker its connections', async () => {
    // Slow git answers keep the crawl in progress long enough to cut it in the middle.
    repos.standin.git.setDelay(150);
    const runId = await producer.startRun({ kind: 'repos', source: { kind: 'repos', repos: FIRST } });
    const progress = await firstRepositoryDone(producer, runId);
    await proxy.cut('blackhole');
    // The cut must land mid-crawl for this test to mean anything.
    expect(progress?.repositoriesDone ?? 0).toBeLessThan(FIRST.length);
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    await proxy.restore();
    repos.standin.git.setDelay(0);

    await expectCrawledOnce(db.db, producer, runId, FIRST);

    // Every connection comes back to the worker's pool once its work is done, and no caller waits for one.
    const busyAndWaiting = () => {
      const counts = workerDatabase.poolCounts?.();
      return counts ? { busy: counts.total - counts.idle, waiting: counts.waiting } : null;
    };
    await expect.poll(busyAndWaiting, { timeout: 10_000, interval: 100 }).toEqual({ busy: 0, waiting: 0 });
    // And the worker crawls on with them.
    const next = await producer.startRun({ kind: 'repos', source: { kind: 'repos', repos: LATER } });
    const later = await producer.waitForRun(next, { pollMs: 100 });
    expect(later).toMatchObject({ status: 'finished', repositoriesDone: 1 });
    expect(later.outcomes.indexed).toBe(1);
  }, 60_000);
});
