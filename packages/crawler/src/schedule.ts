/**
 * Scheduled re-crawls. Each repository carries `next_crawl_at`, set from its activity: a repository pushed
 * an hour ago is probed again within the hour, one idle for a year once a week. A periodic tick (a BullMQ
 * job scheduler when Redis is configured, so exactly one tick runs across all workers; a timer in-process
 * otherwise) enqueues the repositories that are due as one `schedule` crawl run and pushes their next date
 * forward. The probe itself is cheap: the repository job skips repositories whose head did not move.
 */
import {
  claimDueRepositories,
  claimLinksDue,
  type Database,
  type RepositoryActivityRow,
  setNextCrawlDates,
  unscheduledRepositories,
} from '@atskills/db';
import { parseJobData, QUEUES } from '@atskills/queue';
import { type Job, Queue, UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const SCHEDULER_ID = 'recrawl-tick';

/** How often due repositories are looked for, unless configured otherwise. */
export const DEFAULT_TICK_MS = 5 * 60_000;
/** A linked repository not indexed (or refreshed) for this long is indexed again by the next tick. */
export const LINK_REFRESH_MS = 15 * 60_000;
/** Repositories enqueued per tick at most; the rest stay due for the next tick. */
export const DEFAULT_BATCH = 500;

/** What the interval depends on. */
export type RepositoryActivity = Omit<RepositoryActivityRow, 'id' | 'lastCrawledAt'>;

// Activity bands: [pushed within, re-probe every]. Recent pushes predict more pushes; idle repositories back off.
const BANDS: [number, number][] = [
  [DAY, HOUR],
  [7 * DAY, 6 * HOUR],
  [30 * DAY, DAY],
  [180 * DAY, 3 * DAY],
];
const IDLE_INTERVAL = 7 * DAY;
const DORMANT_INTERVAL = 30 * DAY;
const FAILED_INTERVAL = 6 * HOUR;

/**
 * The re-probe interval of a repository (ms): follows how recently it was pushed; archived and gone ones
 * are checked monthly (a gone repository may come back), a failed one again within hours. A spread of up
 * to +10%, fixed per repository, keeps repositories crawled together from staying in lockstep.
 */
export function recrawlInterval(repo: RepositoryActivity, now: Date): number {
  let interval: number;
  if (repo.goneAt || repo.archived) interval = DORMANT_INTERVAL;
  else if (!repo.pushedAt) interval = IDLE_INTERVAL;
  else {
    const age = Math.max(0, now.getTime() - repo.pushedAt.getTime());
    interval = BANDS.find(([within]) => age <= within)?.[1] ?? IDLE_INTERVAL;
  }
  if (repo.lastCrawlOutcome === 'failed') interval = Math.min(interval, FAILED_INTERVAL);
  return Math.round(interval * (1 + spread(`${repo.owner}/${repo.name}`.toLowerCase()) * 0.1));
}

/** When the repository should be probed next, counted from `from` (its last probe). */
export function nextCrawlAt(repo: RepositoryActivity, from: Date, now: Date = from): Date {
  return new Date(from.getTime() + recrawlInterval(repo, now));
}

/** A stable number in [0, 1) per name (FNV-1a): deterministic, so tests and restarts agree. */
function spread(name: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    hash ^= name.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) / 0x1_0000_0000;
}

/**
 * Hands due repositories (`owner/repo`) to the crawler as one `schedule` run and returns its id; with a
 * Crawler this is `(repos) => crawler.startRun({ kind: 'schedule', source: { kind: 'repos', repos } })`.
 */
export type StartScheduledRun = (repos: string[]) => Promise<number>;

export interface RecrawlDeps {
  db: Database;
  startRun: StartScheduledRun;
  /** Queues indexes of linked repositories (CrawlControl.enqueueLinkIndex); without it links are not refreshed. */
  indexLink?: (linkId: number) => Promise<void>;
  /** The time source (tests pin it). */
  clock?: () => Date;
  batch?: number;
}

/**
 * One scheduler tick: gives never-scheduled repositories a date, then enqueues the due ones (oldest first)
 * as one `schedule` run and moves their dates forward. Returns the run id (null when nothing was due).
 */
export async function runRecrawlTick(deps: RecrawlDeps): Promise<{ runId: number | null; enqueued: number }> {
  const now = (deps.clock ?? (() => new Date()))();
  const batch = deps.batch ?? DEFAULT_BATCH;

  // Repositories crawled (by discovery, an explicit list, a rebuild) but never scheduled get their first date.
  const unscheduled = await unscheduledRepositories(deps.db, batch * 4);
  await setNextCrawlDates(
    deps.db,
    unscheduled.map((repo) => ({ id: repo.id, at: nextCrawlAt(repo, repo.lastCrawledAt ?? now, now) })),
  );

  const claimed = await claimDueRepositories(deps.db, now, batch, (repo) => nextCrawlAt(repo, now));
  // Linked repositories are refreshed too: token links get no webhooks, and App deliveries can be missed.
  let links = 0;
  if (deps.indexLink) {
    const due = await claimLinksDue(deps.db, new Date(now.getTime() - LINK_REFRESH_MS), now, batch);
    for (const id of due) await deps.indexLink(id);
    links = due.length;
  }
  if (claimed.length === 0) return { runId: null, enqueued: links };
  const runId = await deps.startRun(claimed.map((r) => `${r.owner}/${r.name}`));
  return { runId, enqueued: claimed.length + links };
}

export interface RecrawlSchedulerOptions extends RecrawlDeps {
  /** Tick period (ms). */
  everyMs?: number;
  /** With Redis: a BullMQ job scheduler drives the ticks (one tick at a time across every worker). */
  redis?: Redis;
  /** BullMQ key prefix (CRAWL_QUEUE_PREFIX). */
  prefix?: string;
  logger?: { info(obj: object, msg: string): void; error(obj: object, msg: string): void };
}

export interface RecrawlScheduler {
  readonly mode: 'bullmq' | 'in-process';
  /** Stops ticking; waits for a running tick to end. */
  close(): Promise<void>;
}

/**
 * Starts scheduled re-crawls: with Redis, upserts the BullMQ job scheduler (idempotent, so every worker
 * replica may call it) and runs a tick worker; without, a timer in this process.
 */
export async function startRecrawlScheduler(options: RecrawlSchedulerOptions): Promise<RecrawlScheduler> {
  const everyMs = options.everyMs ?? DEFAULT_TICK_MS;
  const tick = async () => {
    const result = await runRecrawlTick(options);
    if (result.enqueued > 0) options.logger?.info(result, 'scheduled re-crawl enqueued');
    return result;
  };

  if (!options.redis) {
    let running: Promise<unknown> = Promise.resolve();
    const timer = setInterval(() => {
      running = tick().catch((err) => options.logger?.error({ err }, 'scheduled re-crawl failed'));
    }, everyMs);
    timer.unref();
    return {
      mode: 'in-process',
      async close() {
        clearInterval(timer);
        await running;
      },
    };
  }

  const connection = options.redis;
  const prefix = options.prefix ?? 'atskills';
  const queue = new Queue(QUEUES.schedule.name, { connection, prefix });
  // Without a listener BullMQ prints a lost connection's every error as a multi-line stack trace on stderr
  // (its emit falls back to console.error), between the JSON log lines.
  queue.on('error', (err) => options.logger?.error({ err }, 'schedule queue error'));
  await queue.upsertJobScheduler(
    SCHEDULER_ID,
    { every: everyMs },
    { name: SCHEDULER_ID, data: {}, opts: { removeOnComplete: 100, removeOnFail: 100 } },
  );
  // BullMQ workers need their own blocking connection; duplicate keeps the caller's settings.
  const worker = new Worker(
    QUEUES.schedule.name,
    async (job: Job) => {
      // Only the job scheduler's empty tick is run; anything else written to the queue is refused.
      try {
        parseJobData('schedule', job.data);
      } catch (error) {
        throw new UnrecoverableError((error as Error).message);
      }
      return tick();
    },
    {
      connection: connection.duplicate({ maxRetriesPerRequest: null }),
      prefix,
      concurrency: 1,
    },
  );
  worker.on('failed', (job, err) =>
    options.logger?.error({ err, jobId: job?.id }, 'scheduled re-crawl failed'),
  );
  worker.on('error', (err) => options.logger?.error({ err }, 'schedule worker error'));
  return {
    mode: 'bullmq',
    async close() {
      await worker.close();
      await worker.disconnect();
      await queue.close();
    },
  };
}
