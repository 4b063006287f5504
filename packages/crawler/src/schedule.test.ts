import { randomBytes } from 'node:crypto';
import { crawlRuns, createCrawlRun, repositories } from '@atskills/db';
import { eq } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import {
  crawlStatus,
  nextCrawlAt,
  recrawlInterval,
  runRecrawlTick,
  startRecrawlScheduler,
} from './schedule.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const NOW = new Date('2026-06-01T12:00:00Z');

function activity(overrides: Partial<Parameters<typeof recrawlInterval>[0]> = {}) {
  return {
    owner: 'acme',
    name: 'skills',
    pushedAt: null,
    archived: false,
    goneAt: null,
    lastCrawlOutcome: 'indexed',
    ...overrides,
  };
}

describe('recrawlInterval', () => {
  it('probes recently pushed repositories more often and backs idle ones off', () => {
    const ago = (ms: number) => new Date(NOW.getTime() - ms);
    const intervals = [HOUR, 3 * DAY, 20 * DAY, 100 * DAY, 400 * DAY].map((age) =>
      recrawlInterval(activity({ pushedAt: ago(age) }), NOW),
    );
    for (let i = 1; i < intervals.length; i++) expect(intervals[i]).toBeGreaterThan(intervals[i - 1]!);
    expect(intervals[0]).toBeGreaterThanOrEqual(HOUR);
    expect(intervals[0]).toBeLessThanOrEqual(1.1 * HOUR);
    expect(intervals.at(-1)).toBeGreaterThanOrEqual(7 * DAY);
  });

  it('checks archived and gone repositories monthly and retries failures within hours', () => {
    expect(recrawlInterval(activity({ archived: true, pushedAt: NOW }), NOW)).toBeGreaterThanOrEqual(
      30 * DAY,
    );
    expect(recrawlInterval(activity({ goneAt: NOW }), NOW)).toBeGreaterThanOrEqual(30 * DAY);
    expect(recrawlInterval(activity({ lastCrawlOutcome: 'failed' }), NOW)).toBeLessThanOrEqual(6.6 * HOUR);
  });

  it('spreads repositories with the same activity apart, the same way every time', () => {
    const a = nextCrawlAt(activity({ name: 'one' }), NOW);
    const b = nextCrawlAt(activity({ name: 'two' }), NOW);
    expect(a.getTime()).not.toBe(b.getTime());
    expect(nextCrawlAt(activity({ name: 'one' }), NOW).getTime()).toBe(a.getTime());
  });
});

describe('scheduled re-crawls over the database', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase('schedule');
    const seen = new Date(NOW.getTime() - 2 * DAY);
    await database.db.insert(repositories).values([
      // Pushed yesterday, crawled two days ago, never scheduled: due (hourly band).
      {
        owner: 'busy',
        name: 'repo',
        pushedAt: new Date(NOW.getTime() - DAY + HOUR),
        lastCrawledAt: seen,
        lastCrawlOutcome: 'indexed',
      },
      // Idle for a year, crawled two days ago: not due for days.
      {
        owner: 'quiet',
        name: 'repo',
        pushedAt: new Date(NOW.getTime() - 365 * DAY),
        lastCrawledAt: seen,
        lastCrawlOutcome: 'unchanged',
      },
      // Explicitly due.
      {
        owner: 'due',
        name: 'repo',
        nextCrawlAt: new Date(NOW.getTime() - HOUR),
        lastCrawledAt: seen,
        lastCrawlOutcome: 'failed',
        lastCrawlError: 'clone timed out',
      },
      // Never crawled (discovery has not reached it): left to discovery.
      { owner: 'fresh', name: 'repo' },
    ]);
  });
  afterAll(() => database.drop());

  it('enqueues the due repositories as one schedule run and moves their dates forward', async () => {
    const calls: string[][] = [];
    const result = await runRecrawlTick({
      db: database.db,
      clock: () => NOW,
      // As Crawler.startRun does: record the run, then hand the repositories to discovery.
      startRun: async (repos) => {
        calls.push(repos);
        return createCrawlRun(database.db, { kind: 'schedule', repositoriesTotal: repos.length });
      },
    });
    expect(result.enqueued).toBe(2);
    expect(calls).toEqual([['busy/repo', 'due/repo'].sort()]);
    const [run] = await database.db.select().from(crawlRuns).where(eq(crawlRuns.id, result.runId!));
    expect(run).toMatchObject({ kind: 'schedule', repositoriesTotal: 2 });
    const rows = await database.db.select().from(repositories);
    const next = Object.fromEntries(rows.map((r) => [r.owner, r.nextCrawlAt]));
    expect(next.busy!.getTime()).toBeGreaterThan(NOW.getTime());
    expect(next.due!.getTime()).toBeGreaterThan(NOW.getTime());
    expect(next.quiet!.getTime()).toBeGreaterThan(NOW.getTime() + 4 * DAY);
    expect(next.fresh).toBeNull();

    // Nothing is due again at the same instant: a second tick enqueues nothing.
    const again = await runRecrawlTick({
      db: database.db,
      clock: () => NOW,
      startRun: async () => {
        throw new Error('nothing should be enqueued');
      },
    });
    expect(again).toEqual({ runId: null, enqueued: 0 });
  });

  it('reports crawl status: last run, due repositories, failures', async () => {
    const later = new Date(NOW.getTime() + 2 * HOUR);
    const status = await crawlStatus(database.db, later);
    expect(status.lastRun).toMatchObject({ kind: 'schedule', repositoriesTotal: 2, status: 'running' });
    expect(status.repositories).toBe(4);
    expect(status.due).toBe(1); // busy: hourly band
    expect(status.nextDueAt!.getTime()).toBeLessThanOrEqual(later.getTime());
    expect(status.failuresTotal).toBe(1);
    expect(status.failures).toEqual([
      { owner: 'due', name: 'repo', error: 'clone timed out', at: expect.any(Date) },
    ]);
  });

  it('drives ticks with a BullMQ job scheduler when Redis is configured', async () => {
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    const prefix = `test-schedule-${randomBytes(4).toString('hex')}`;
    let resolveTick: (repos: string[]) => void;
    const ticked = new Promise<string[]>((resolve) => {
      resolveTick = resolve;
    });
    const scheduler = await startRecrawlScheduler({
      db: database.db,
      redis,
      prefix,
      everyMs: 60_000,
      // Far enough ahead that 'busy' is due again.
      clock: () => new Date(NOW.getTime() + 3 * HOUR),
      startRun: async (repos) => {
        resolveTick(repos);
        return createCrawlRun(database.db, { kind: 'schedule' });
      },
    });
    try {
      expect(scheduler.mode).toBe('bullmq');
      // A job scheduler runs its first iteration at once, then every `everyMs`.
      expect(await ticked).toEqual(['busy/repo']);
      const schedulers = await redis.keys(`${prefix}:crawl-schedule:*`);
      expect(schedulers.length).toBeGreaterThan(0);
    } finally {
      await scheduler.close();
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    }
  });
});
