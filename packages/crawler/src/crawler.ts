import { randomUUID } from 'node:crypto';
import {
  type CrawlRunKind,
  type CrawlRunProgress,
  crawlRunProgress,
  createCrawlRun,
  type Database,
  failInterruptedRuns,
  finishCrawlRun,
  loggableMessage,
  redactUrl,
} from '@atskills/db';
import { LinkAccess } from '@atskills/github-auth';
import {
  type CrawlControl,
  type DiscoverJobData,
  InvalidJobError,
  jobIds,
  jobOptions,
  type LinkJobData,
  parseJobData,
  QUEUES,
  type RepositoryJobData,
} from '@atskills/queue';
import { DelayedError, type Job, Queue, type QueueOptions, UnrecoverableError, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { CrawlerSettings } from './config.js';
import { ContentPool } from './content/content-pool.js';
import { GitSlots } from './git-slots.js';
import { GithubClient } from './github/github-client.js';
import { RateLimitedError } from './github/rate-limited-error.js';
import { InProcessQueue } from './in-process-queue.js';
import { discoverRepositories } from './jobs/discover.list.js';
import type { JobContext } from './jobs/job-context.js';
import { indexLink, recordAbandonedLinkJob } from './jobs/link.index.js';
import { type CrawlDeps, crawlRepository, recordAbandonedRepositoryJob } from './jobs/repository.crawl.js';
import { completeRuns } from './jobs/run-completion.js';
import { UnchangedReportBatch } from './jobs/unchanged-batch.js';
import { createLogger, withSafeErrors } from './logger.js';
import { enqueued, isConnectionError } from './queue-unavailable.js';
import { abortedByShutdown, ShutdownError } from './shutdown.js';

export interface CreateCrawlerOptions {
  db: Database;
  settings: CrawlerSettings;
  /** Redis URL; defaults to settings.redisUrl. Without one, jobs run in this process. */
  redis?: string;
  logger?: Logger;
  /** Process jobs in this process (default true). False only enqueues (BullMQ mode: other workers run them). */
  work?: boolean;
  /** Operational figures the crawler reports (the API's Prometheus registry when it runs the crawler). */
  metrics?: { githubRateLimit?(remaining: number, resource: string): void };
  /** Credentials of linked repositories; default: from settings.githubAuth (GITHUB_APP_*, LINK_TOKEN_KEYS). */
  linkAccess?: LinkAccess;
  /**
   * The key of this process's lock (`claimRunOwnership`), carried by the runs it starts when their jobs run
   * in this process, so that another process can end them if this one dies.
   */
  runOwner?: number;
}

/**
 * The crawler as its owner uses it: the CrawlControl port producers see (start runs, progress, counts),
 * plus waiting for a run and shutting the workers down.
 */
export interface Crawler extends CrawlControl {
  /** Resolves when the run is finished, calling onProgress while waiting. */
  waitForRun(
    runId: number,
    options?: { pollMs?: number; onProgress?: (p: CrawlRunProgress) => void },
  ): Promise<CrawlRunProgress>;
  /** Stops workers: running jobs get `deadlineMs` to finish, then are aborted and released. */
  close(options?: { deadlineMs?: number }): Promise<void>;
}

/**
 * Runs a job under the job timeout and the shutdown signal. A plain controller and timer rather than
 * AbortSignal.any([AbortSignal.timeout(), ...]): Node 20 may garbage-collect a timeout signal only
 * referenced by a composite one, and then it never fires.
 */
async function withJobSignal<T>(
  deps: CrawlDeps,
  ctx: { finalAttempt: boolean; shutdown: AbortSignal },
  run: (context: JobContext) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const timeoutMs = deps.settings.crawlJobTimeoutMs;
  const arm = () =>
    setTimeout(() => controller.abort(new Error(`job timeout of ${timeoutMs} ms`)), timeoutMs);
  let timer = arm();
  const restartTimeout = () => {
    clearTimeout(timer);
    timer = arm();
  };
  const onShutdown = () => controller.abort(ctx.shutdown.reason);
  if (ctx.shutdown.aborted) onShutdown();
  else ctx.shutdown.addEventListener('abort', onShutdown, { once: true });
  try {
    return await run({ signal: controller.signal, finalAttempt: ctx.finalAttempt, restartTimeout });
  } finally {
    clearTimeout(timer);
    ctx.shutdown.removeEventListener('abort', onShutdown);
  }
}

/** Builds the job handlers shared by both transports; the transport supplies enqueueing. */
function handlers(
  deps: CrawlDeps,
  linkAccess: LinkAccess,
  enqueueRepositories: (jobs: RepositoryJobData[]) => Promise<void>,
) {
  // A job started by an HTTP request logs with that request's id.
  const withRequest = (requestId: string | undefined): CrawlDeps =>
    requestId ? { ...deps, logger: deps.logger.child({ requestId }) } : deps;
  return {
    // A discovery that will not be retried again ends its run as failed: see `abandoned`.
    discover: async (raw: unknown) => {
      const data = parseJobData('discover', raw);
      return discoverRepositories(withRequest(data.requestId), data, enqueueRepositories);
    },
    repository: (raw: unknown, ctx: { finalAttempt: boolean; shutdown: AbortSignal }) => {
      const data = parseJobData('repository', raw);
      return withJobSignal(deps, ctx, (context) =>
        crawlRepository(withRequest(data.requestId), data, context),
      );
    },
    link: (raw: unknown, ctx: { finalAttempt: boolean; shutdown: AbortSignal }) => {
      const data = parseJobData('link', raw);
      const linkDeps = { ...withRequest(data.requestId), access: linkAccess };
      return withJobSignal(deps, ctx, (context) => indexLink(linkDeps, data, context));
    },
    /**
     * A job the queue failed for good (no attempt left, or stalled past the limit) without settling its run:
     * a repository job that left no report (see recordAbandonedRepositoryJob), a link left queued or
     * indexing (recordAbandonedLinkJob), a discovery whose last attempt threw. The run is completed or
     * ended here, so no waiter waits for ever.
     */
    abandoned: async (queue: string, raw: unknown, error: Error) => {
      // The reason is stored in a report or a link's status: a database error by its driver's words only.
      const reason = loggableMessage(error);
      try {
        if (queue === QUEUES.repository.name) {
          await recordAbandonedRepositoryJob(deps, parseJobData('repository', raw), reason);
        } else if (queue === QUEUES.link.name) {
          await recordAbandonedLinkJob(deps, parseJobData('link', raw), reason);
        } else if (queue === QUEUES.discover.name) {
          const { runId } = parseJobData('discover', raw);
          await finishCrawlRun(deps.db, runId, 'failed', { discoveryFailed: 1 });
          deps.logger.error({ err: error, runId }, 'discovery failed');
        }
      } catch (err) {
        // A payload that fails its schema names no run (it was logged as refused).
        if (err instanceof InvalidJobError) return;
        // A database still down leaves the run running: the log says which, for the operator.
        deps.logger.error({ err, queue, reason }, 'could not settle an abandoned job');
      }
    },
  };
}

/** Creates the crawler over BullMQ (when a Redis URL is set) or an in-process queue. */
export function createCrawler(options: CreateCrawlerOptions): Crawler {
  const { db, settings } = options;
  const logger = withSafeErrors(options.logger ?? createLogger(settings.logLevel));
  const github = new GithubClient({
    baseUrl: settings.githubApiUrl,
    token: settings.githubToken,
    logger,
    searchIntervalMs: settings.githubSearchIntervalMs,
    ...(options.metrics?.githubRateLimit ? { onRateLimitRemaining: options.metrics.githubRateLimit } : {}),
  });
  const deps: CrawlDeps = {
    db,
    settings,
    github,
    logger,
    contentPool: new ContentPool(settings.crawlContentProcesses),
    gitSlots: new GitSlots(Math.min(settings.crawlGitConcurrency, settings.crawlConcurrency)),
    unchangedReports: new UnchangedReportBatch(db, (runIds) => completeRuns(deps, runIds)),
  };
  const linkAccess = options.linkAccess ?? new LinkAccess(settings.githubAuth, settings.githubApiUrl);
  const redisUrl = options.redis ?? settings.redisUrl;
  const common = {
    startRunRow: (input: { kind: CrawlRunKind; requestId?: string }) =>
      createCrawlRun(db, {
        kind: input.kind,
        requestId: input.requestId,
        // Only runs whose jobs stay in this process have an owner whose death strands them.
        ...(!redisUrl && options.runOwner !== undefined ? { ownerLock: options.runOwner } : {}),
      }),
    failRunRow: (runId: number) => finishCrawlRun(db, runId, 'failed', { enqueueFailed: 1 }),
    progress: (runId: number) => crawlRunProgress(db, runId),
    async waitForRun(
      runId: number,
      wait: { pollMs?: number; onProgress?: (p: CrawlRunProgress) => void } = {},
    ) {
      let failures = 0;
      for (;;) {
        let progress: CrawlRunProgress | null;
        try {
          progress = await crawlRunProgress(db, runId);
          failures = 0;
        } catch (error) {
          // A busy pool or a database blip must not end the wait: the run goes on regardless.
          if (++failures >= 20) throw error;
          await new Promise((r) => setTimeout(r, wait.pollMs ?? 250));
          continue;
        }
        if (!progress) throw new Error(`crawl run ${runId} does not exist`);
        wait.onProgress?.(progress);
        if (progress.status !== 'running') return progress;
        await new Promise((r) => setTimeout(r, wait.pollMs ?? 250));
      }
    },
  };
  const crawler = redisUrl
    ? bullmqCrawler(deps, linkAccess, redisUrl, options.work ?? true, common)
    : inProcessCrawler(deps, linkAccess, common);
  return crawler;
}

type Common = {
  startRunRow(input: { kind: CrawlRunKind; requestId?: string }): Promise<number>;
  /** Ends a run whose first job could not be queued. */
  failRunRow(runId: number): Promise<void>;
  progress: Crawler['progress'];
  waitForRun: Crawler['waitForRun'];
};

function inProcessCrawler(deps: CrawlDeps, linkAccess: LinkAccess, common: Common): Crawler {
  const { settings, logger } = deps;
  const shutdown = new AbortController();
  /** Runs that lost a job to the queues' close: no job of this process will complete them (see close). */
  const interruptedRuns = new Set<number>();
  const dropped = (data: unknown) => {
    const runId = (data as { runId?: unknown }).runId;
    if (typeof runId === 'number') interruptedRuns.add(runId);
  };
  const options = {
    attempts: settings.crawlAttempts,
    backoffMs: settings.crawlBackoffMs,
    onError: (error: unknown, job: { id: string }) =>
      logger.warn({ err: error, jobId: job.id }, 'job attempt failed'),
  };
  const enqueueRepositories = async (jobs: RepositoryJobData[]) => {
    for (const job of jobs) repositoryQueue.add(job, jobIds.repository(job.runId, job.owner, job.repo));
  };
  const run = handlers(deps, linkAccess, enqueueRepositories);
  const settle = (queue: string) => (error: unknown, data: unknown) =>
    void run.abandoned(queue, data, error instanceof Error ? error : new Error(String(error)));
  const discoverQueue = new InProcessQueue('discover', (data: DiscoverJobData) => run.discover(data), {
    ...options,
    concurrency: 1,
    onFailed: settle(QUEUES.discover.name),
    onDropped: dropped,
  });
  const repositoryQueue = new InProcessQueue(
    'repository',
    (data: RepositoryJobData, meta) =>
      run.repository(data, { finalAttempt: meta.finalAttempt, shutdown: shutdown.signal }),
    {
      ...options,
      concurrency: settings.crawlConcurrency,
      limiter: { max: settings.crawlRateLimitPerMinute, durationMs: 60_000 },
      onFailed: settle(QUEUES.repository.name),
      onDropped: dropped,
    },
  );
  const linkQueue = new InProcessQueue(
    'link',
    (data: LinkJobData, meta) =>
      run.link(data, { finalAttempt: meta.finalAttempt, shutdown: shutdown.signal }),
    { ...options, concurrency: settings.crawlGitConcurrency, onFailed: settle(QUEUES.link.name) },
  );
  return {
    mode: 'in-process',
    async enqueueLinkIndex(linkId, opts = {}) {
      // A closed queue drops jobs: say so, as BullMQ does on a closed connection, so no link waits for it.
      if (linkQueue.isClosed) throw new Error('the crawler is shut down');
      linkQueue.add(
        { linkId, force: opts.force ?? false, requestId: opts.requestId },
        jobIds.link(linkId, Date.now(), randomUUID()),
      );
    },
    async startRun(input) {
      const runId = await common.startRunRow(input);
      discoverQueue.add(
        { runId, source: input.source, force: input.force ?? false, requestId: input.requestId },
        jobIds.discover(runId),
      );
      return runId;
    },
    progress: common.progress,
    waitForRun: common.waitForRun,
    async counts() {
      return {
        [QUEUES.discover.name]: discoverQueue.counts(),
        [QUEUES.repository.name]: repositoryQueue.counts(),
        [QUEUES.link.name]: linkQueue.counts(),
      };
    },
    async close({ deadlineMs = 10_000 } = {}) {
      const closing = Promise.all([discoverQueue.close(), repositoryQueue.close(), linkQueue.close()]);
      const timer = setTimeout(() => shutdown.abort(new ShutdownError()), deadlineMs);
      await closing;
      clearTimeout(timer);
      // The jobs not run went with the queues: a run they belonged to would stay running for ever, and every
      // later index request of its repositories would join it instead of starting a crawl.
      try {
        const ended = await failInterruptedRuns(deps.db, [...interruptedRuns]);
        if (ended.length > 0) logger.warn({ runIds: ended }, 'crawl runs interrupted by shutdown');
      } catch (err) {
        logger.error({ err, runIds: [...interruptedRuns] }, 'could not end the runs interrupted by shutdown');
      }
      await deps.contentPool.close();
    },
  };
}

function bullmqCrawler(
  deps: CrawlDeps,
  linkAccess: LinkAccess,
  redisUrl: string,
  work: boolean,
  common: Common,
): Crawler {
  const { settings, logger } = deps;
  // BullMQ requires maxRetriesPerRequest: null on blocking connections; one connection per client.
  const connect = () => new Redis(redisUrl, { maxRetriesPerRequest: null, lazyConnect: false });
  const connections: Redis[] = [];
  // Every connection retries a refused connect a few times a second for as long as Redis is away: one line
  // when it goes (naming REDIS_URL and the error), one when it is back, not a stack per attempt.
  let redisDown = false;
  const redisUnreachable = (err: Error & { code?: string }) => {
    if (redisDown) return;
    redisDown = true;
    logger.error(
      { redis: redactUrl(redisUrl), code: err.code, reason: err.message },
      `cannot reach Redis at REDIS_URL ${redactUrl(redisUrl)} (${err.message}); retrying until it answers`,
    );
  };
  const connection = () => {
    const c = connect();
    c.on('error', (err: Error) =>
      isConnectionError(err)
        ? redisUnreachable(err)
        : logger.error({ err, redis: redactUrl(redisUrl) }, 'redis connection error'),
    );
    c.on('ready', () => {
      if (!redisDown) return;
      redisDown = false;
      logger.info({ redis: redactUrl(redisUrl) }, 'Redis answers again');
    });
    connections.push(c);
    return c;
  };
  const queueOptions = (): QueueOptions => ({
    connection: connection(),
    prefix: settings.crawlQueuePrefix,
  });
  const discoverQueue = new Queue(QUEUES.discover.name, {
    ...queueOptions(),
    defaultJobOptions: jobOptions('discover', settings),
  });
  const repositoryQueue = new Queue(QUEUES.repository.name, {
    ...queueOptions(),
    defaultJobOptions: jobOptions('repository', settings),
  });
  const linkQueue = new Queue(QUEUES.link.name, {
    ...queueOptions(),
    defaultJobOptions: jobOptions('link', settings),
  });
  for (const queue of [discoverQueue, repositoryQueue, linkQueue]) {
    queue.on('error', (err) =>
      isConnectionError(err)
        ? redisUnreachable(err)
        : logger.error({ err, queue: queue.name }, 'queue error'),
    );
  }
  const enqueueRepositories = async (jobs: RepositoryJobData[]) => {
    for (let i = 0; i < jobs.length; i += 500) {
      await repositoryQueue.addBulk(
        jobs.slice(i, i + 500).map((data) => ({
          name: 'crawl',
          data,
          opts: { jobId: jobIds.repository(data.runId, data.owner, data.repo) },
        })),
      );
    }
  };
  const run = handlers(deps, linkAccess, enqueueRepositories);
  const shutdown = new AbortController();
  const workers: Worker[] = [];

  /** Abandoned jobs being recorded: close() waits for them, or their runs would stay running. */
  const settling = new Set<Promise<void>>();
  const settle = (queue: string, data: unknown, error: Error) => {
    const recorded = run.abandoned(queue, data, error).finally(() => settling.delete(recorded));
    settling.add(recorded);
  };

  const processor =
    (worker: () => Worker, fn: (job: Job) => Promise<unknown>) => async (job: Job, token?: string) => {
      try {
        return await fn(job);
      } catch (error) {
        if (abortedByShutdown(shutdown.signal) && token) {
          // This worker is going away mid-job: the job goes back to the queue as it was, for the next worker,
          // without spending one of its attempts (a failure would, and the last one would fail it for good).
          await job.moveToDelayed(Date.now(), token);
          throw new DelayedError();
        }
        if (error instanceof InvalidJobError) {
          // A payload that fails its schema was not written by this registry's producers: never run or retry it.
          logger.warn({ jobId: job.id, queue: job.queueName, reason: error.message }, 'job refused');
          throw new UnrecoverableError(error.message);
        }
        if (error instanceof RateLimitedError) {
          // Pause this queue's worker and put the job back without using an attempt (BullMQ's manual rate limit).
          logger.warn({ jobId: job.id, retryAfterMs: error.retryAfterMs }, 'rate limited; job delayed');
          await worker().rateLimit(error.retryAfterMs);
          throw Worker.RateLimitError();
        }
        throw error;
      }
    };

  if (work) {
    const workerOptions = {
      prefix: settings.crawlQueuePrefix,
      lockDuration: settings.crawlLockDurationMs,
      stalledInterval: Math.max(1000, Math.floor(settings.crawlLockDurationMs / 2)),
      maxStalledCount: 2,
    };
    const discoverWorker: Worker = new Worker(
      QUEUES.discover.name,
      processor(
        () => discoverWorker,
        (job) => run.discover(job.data),
      ),
      { ...workerOptions, connection: connection(), concurrency: 1 },
    );
    const repositoryWorker: Worker = new Worker(
      QUEUES.repository.name,
      processor(
        () => repositoryWorker,
        (job) =>
          run.repository(job.data, {
            finalAttempt: job.attemptsMade + 1 >= (job.opts.attempts ?? 1),
            shutdown: shutdown.signal,
          }),
      ),
      {
        ...workerOptions,
        connection: connection(),
        concurrency: settings.crawlConcurrency,
        limiter: { max: settings.crawlRateLimitPerMinute, duration: 60_000 },
      },
    );
    const linkWorker: Worker = new Worker(
      QUEUES.link.name,
      processor(
        () => linkWorker,
        (job) =>
          run.link(job.data, {
            finalAttempt: job.attemptsMade + 1 >= (job.opts.attempts ?? 1),
            shutdown: shutdown.signal,
          }),
      ),
      { ...workerOptions, connection: connection(), concurrency: settings.crawlGitConcurrency },
    );
    for (const worker of [discoverWorker, repositoryWorker, linkWorker]) {
      worker.on('error', (err) =>
        isConnectionError(err)
          ? redisUnreachable(err)
          : logger.error({ err, queue: worker.name }, 'worker error'),
      );
      worker.on('failed', (job, err) => {
        logger.warn({ err, jobId: job?.id, attemptsMade: job?.attemptsMade }, 'job attempt failed');
        // finishedOn is set only when no attempt is left (a retried job goes back to wait or delayed).
        if (job?.finishedOn) settle(worker.name, job.data, err);
      });
      workers.push(worker);
    }
  }

  return {
    mode: 'bullmq',
    async enqueueLinkIndex(linkId, opts = {}) {
      await enqueued(
        linkQueue.add(
          'index',
          { linkId, force: opts.force ?? false, requestId: opts.requestId },
          { jobId: jobIds.link(linkId, Date.now(), randomUUID()) },
        ),
      );
    },
    async startRun(input) {
      const runId = await common.startRunRow(input);
      try {
        await enqueued(
          discoverQueue.add(
            'discover',
            { runId, source: input.source, force: input.force ?? false, requestId: input.requestId },
            { jobId: jobIds.discover(runId) },
          ),
        );
      } catch (error) {
        // No job will ever report to this run: it ends now instead of staying "running" for good.
        await common.failRunRow(runId).catch(() => {});
        throw error;
      }
      return runId;
    },
    progress: common.progress,
    waitForRun: common.waitForRun,
    async counts() {
      const states = [
        'waiting',
        'active',
        'delayed',
        'completed',
        'failed',
        'prioritized',
        'waiting-children',
      ] as const;
      return {
        [discoverQueue.name]: await discoverQueue.getJobCounts(...states),
        [repositoryQueue.name]: await repositoryQueue.getJobCounts(...states),
        [linkQueue.name]: await linkQueue.getJobCounts(...states),
      };
    },
    async close({ deadlineMs = 10_000 } = {}) {
      // Finish running jobs within the deadline; then abort them (git killed) and release them: their
      // locks lapse and another worker takes them up again.
      const graceful = Promise.all(workers.map((w) => w.close()));
      let timer: NodeJS.Timeout | undefined;
      const late = await Promise.race([
        graceful.then(() => false),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(true), deadlineMs);
        }),
      ]);
      clearTimeout(timer);
      if (late) {
        shutdown.abort(new ShutdownError());
        await Promise.all(workers.map((w) => w.close(true)));
      }
      await Promise.allSettled([...settling]);
      await Promise.all([discoverQueue.close(), repositoryQueue.close(), linkQueue.close()]);
      await Promise.all(connections.map((c) => c.quit().catch(() => c.disconnect())));
      await deps.contentPool.close();
    },
  };
}
