/**
 * Start-up wiring of a hub process: picks each part's mode from the settings (embedded PGlite or a
 * Postgres server; in-process crawl queue or BullMQ on Redis; in-memory, Postgres or Meilisearch search),
 * says so in the first log lines, applies migrations, builds the app, starts scheduled re-crawls,
 * optionally loads the demo skills, listens, and shuts all of it down in order on request.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import path from 'node:path';
import {
  claimRunOwnership,
  createCrawler,
  type RecrawlScheduler,
  startRecrawlScheduler,
} from '@atskills/crawler';
import {
  connectDatabase,
  crawlOutcomeTotals,
  type DatabaseHandle,
  databaseOptions,
  failInterruptedRuns,
  migrate,
  redactUrl,
} from '@atskills/db';
import { makeDirectory } from '@atskills/protocol/node';
import { CRAWL_QUEUE_NAMES, QUEUES } from '@atskills/queue';
import { Queue } from 'bullmq';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { buildApp } from '../app.js';
import { type AppConfig, ConfigError } from '../config.js';
import { createReadiness } from '../plugins/health.js';
import { crawlMetricsSink, createHubMetrics } from '../plugins/metrics.js';
import { adminSocketPath, startAdminSocket } from './admin-socket.js';
import {
  clusterWindows,
  clusterWorkerId,
  joinClusterMetrics,
  reportListening,
  reportStructuresReady,
} from './cluster.js';
import { loadDemo } from './demo.js';
import { startGithubRateLimitPoll } from './github-rate-limit.js';
import { type HubSettings, loadHubSettings } from './hub-settings.js';
import { createHubLogger } from './logging.js';
import type { OpsConfig } from './ops-config.js';
import { startSearchSync } from './search-sync.js';

export interface StartOptions {
  env?: Record<string, string | undefined>;
  /** Command-line arguments after the script (`--demo`). */
  argv?: string[];
  /** `env` already parsed (server.ts parses it to choose between one hub and a cluster). */
  settings?: HubSettings;
}

/** A started hub: its address and how to stop it. */
export interface RunningHub {
  app: FastifyInstance;
  /** Where it listens, e.g. http://127.0.0.1:8080. */
  url: string;
  logger: Logger;
  config: AppConfig;
  ops: OpsConfig;
  /**
   * Graceful stop: fail readiness, stop accepting connections, let in-flight requests and crawl jobs finish
   * (within SHUTDOWN_TIMEOUT_MS for jobs), then close queues, Redis and the database.
   */
  shutdown(reason: string): Promise<void>;
}

/** The modes of each part, as the first log lines state them. */
export function describeModes(config: AppConfig) {
  const embeddedDir = path.resolve(config.dataDir, 'db');
  return {
    database: config.databaseUrl
      ? {
          mode: 'postgres',
          location: redactUrl(config.databaseUrl),
          summary: `PostgreSQL server at ${redactUrl(config.databaseUrl)}`,
        }
      : {
          mode: 'embedded',
          location: embeddedDir,
          summary: `embedded Postgres (PGlite), data in ${embeddedDir}`,
        },
    queue: config.redisUrl
      ? {
          mode: 'bullmq',
          location: redactUrl(config.redisUrl),
          summary: `BullMQ on Redis at ${redactUrl(config.redisUrl)}; crawl jobs run in \`crawler worker\` processes`,
        }
      : {
          mode: 'in-process',
          location: 'memory',
          summary: 'in-process: crawl jobs run in this process (results are kept in the database)',
        },
    // The same choice as plugins/search.ts: Meilisearch when MEILI_URL is set, else SEARCH_ENGINE.
    search: config.meiliUrl
      ? {
          mode: 'meilisearch',
          location: redactUrl(config.meiliUrl),
          summary: `Meilisearch at ${redactUrl(config.meiliUrl)}, falling back to Postgres while it is down`,
        }
      : config.searchEngine === 'memory'
        ? {
            mode: 'memory',
            location: 'memory',
            summary:
              'in-memory index built from the database at start and kept current (Postgres full-text answers while it builds)',
          }
        : { mode: 'postgres', location: 'database', summary: 'Postgres full-text search in the database' },
  };
}

/** Starts a hub process from environment-like settings. */
export async function startHub(options: StartOptions = {}): Promise<RunningHub> {
  const env = options.env ?? process.env;
  // The one parse of this process's settings; each part gets its own below.
  const { config, ops, crawler: crawlerSettings } = options.settings ?? loadHubSettings(env);
  const demo = ops.atskillsDemo || (options.argv ?? []).includes('--demo');
  const workerId = clusterWorkerId();
  // Work done once for all the hub processes sharing the database: the first worker's, or a single hub's.
  const leadsCluster = workerId === undefined || workerId === 1;
  const hubLogger = createHubLogger(config.logLevel === 'silent' ? 'silent' : config.logLevel);
  // A cluster's workers log to one stream: each line says which worker wrote it.
  const logger = workerId === undefined ? hubLogger : hubLogger.child({ worker: workerId });

  const modes = describeModes(config);
  for (const [part, { mode, location, summary }] of Object.entries(modes)) {
    logger.info({ part, mode, location }, `${part}: ${summary}`);
  }

  const cleanups: (() => Promise<unknown>)[] = [];
  const closeAll = async () => {
    for (const cleanup of cleanups.reverse())
      await cleanup().catch((err) => logger.error({ err }, 'close failed'));
    cleanups.length = 0;
  };
  try {
    const where = { url: config.databaseUrl, dataDir: config.dataDir };
    // Before the database: a HOST that names no address failed only at listen, after migrations and index
    // loads, and its lookup error read as the database's.
    await checkHost(config.host);
    // PGlite creates its own folder but not the parents: a fresh clone has no ./.data yet.
    if (!config.databaseUrl) await makeDataDir(config.dataDir);
    if (config.databaseUrl) {
      // Migrations may build indexes for minutes on a large index: they get their own connection without the
      // short statement timeout that requests run under.
      const migrator = await connectDatabase(databaseOptions('migrate', where));
      try {
        await migrate(migrator);
      } finally {
        await migrator.close();
      }
    }
    // The embedded database's exclusive lock names this hub; a second hub (or the CLI) sees who holds it.
    const database: DatabaseHandle = await connectDatabase(databaseOptions('api', where, { owner: 'hub' }));
    cleanups.push(() => database.close());
    if (!config.databaseUrl) await migrate(database);
    logger.info({ part: 'database' }, 'migrations applied');
    if (!config.databaseUrl) {
      // The embedded database is this process's alone, so a run still marked running was this hub's before
      // it died (a graceful stop ends its runs itself): its jobs went with that process.
      const interrupted = await failInterruptedRuns(database.db);
      if (interrupted.length > 0) {
        logger.warn({ part: 'crawler', runIds: interrupted }, 'crawl runs interrupted by the last stop');
      }
    }

    const redis = config.redisUrl ? connectRedis(config.redisUrl, logger) : undefined;
    if (redis) cleanups.push(() => redis.quit().catch(() => redis.disconnect()));

    const metrics = createHubMetrics();
    if (workerId !== undefined) joinClusterMetrics(metrics, workerId);
    // Without Redis on a PostgreSQL server, crawl jobs live in this process: its runs carry its lock, and
    // the runs of hubs or crawlers that died are ended (the embedded database did that above).
    const ownership =
      config.databaseUrl && !config.redisUrl
        ? await claimRunOwnership({
            db: database.db,
            databaseUrl: config.databaseUrl,
            logger: logger.child({ part: 'crawler' }),
          })
        : undefined;
    if (ownership) cleanups.push(() => ownership.close());
    // With Redis, crawl jobs run in the crawler workers (`crawler worker`); this process only enqueues.
    const crawler = createCrawler({
      ...(ownership ? { runOwner: ownership.key } : {}),
      db: database.db,
      settings: crawlerSettings,
      ...(config.redisUrl ? { redis: config.redisUrl } : {}),
      logger: logger.child({ component: 'crawler' }),
      work: !config.redisUrl,
      metrics: crawlMetricsSink(metrics),
    });
    cleanups.push(() => crawler.close({ deadlineMs: ops.shutdownTimeoutMs }));

    // Shared figures (queues, crawl totals from Postgres): one cluster worker reports them, not each.
    if (leadsCluster) {
      for (const queue of CRAWL_QUEUE_NAMES) {
        metrics.setQueueDepthSource(queue, async () => (await crawler.counts())[queue] ?? {});
      }
      metrics.setCrawlOutcomeSource(() => crawlOutcomeTotals(database.db));
    }

    // The dashboard reads the crawler's queues through its own handles (same names and prefix).
    const boardQueues = redis
      ? [...CRAWL_QUEUE_NAMES, QUEUES.schedule.name].map(
          (name) => new Queue(name, { connection: redis, prefix: crawlerSettings.crawlQueuePrefix }),
        )
      : [];
    for (const queue of boardQueues) cleanups.push(() => queue.close());

    const readiness = createReadiness();
    const app = await buildApp(config, {
      database,
      queue: crawler,
      logger,
      metrics,
      ops: {
        config: ops,
        readiness,
        ...(redis ? { redis, boardQueues } : { queueMode: 'in-process' }),
        // A cluster's workers count rate limits together: in Redis when there is one, else in the primary.
        ...(!redis && workerId !== undefined ? { sharedRateLimit: clusterWindows() } : {}),
      },
    });
    cleanups.push(() => app.close());

    let scheduler: RecrawlScheduler | undefined;
    if (ops.recrawlTickMs > 0) {
      scheduler = await startRecrawlScheduler({
        db: database.db,
        startRun: (repos) => crawler.startRun({ kind: 'schedule', source: { kind: 'repos', repos } }),
        indexLink: (linkId) => crawler.enqueueLinkIndex(linkId),
        everyMs: ops.recrawlTickMs,
        ...(redis ? { redis } : {}),
        prefix: crawlerSettings.crawlQueuePrefix,
        logger: logger.child({ component: 'schedule' }),
      });
      const running = scheduler;
      cleanups.push(() => running.close());
      logger.info(
        { part: 'schedule', mode: scheduler.mode, everyMs: ops.recrawlTickMs },
        'scheduled re-crawls on',
      );
    }

    // Workers spend the GitHub budget elsewhere: ask GitHub what is left of the token they share.
    if (config.redisUrl && crawlerSettings.githubToken) {
      const sink = crawlMetricsSink(metrics);
      const rateLimit = startGithubRateLimitPoll({
        apiUrl: crawlerSettings.githubApiUrl,
        token: crawlerSettings.githubToken,
        report: (remaining, resource) => sink.githubRateLimit(remaining, resource),
        logger,
      });
      cleanups.push(async () => rateLimit.close());
      rateLimit
        .poll()
        .catch((err: Error) => logger.warn({ err: { message: err.message } }, 'github rate limit unknown'));
    }

    if (config.meiliUrl) {
      const sync = startSearchSync({
        db: database.db,
        engine: app.searchEngine,
        ...(redis ? { redis } : {}),
        prefix: crawlerSettings.crawlQueuePrefix,
        logger: logger.child({ component: 'search-sync' }),
      });
      cleanups.push(() => sync.close());
      // Catch up with crawls done while no API ran, without holding up the start.
      sync.tick().catch((err: Error) => logger.warn({ err: { message: err.message } }, 'search sync failed'));
    }

    // The demo skills are loaded once per cluster.
    if (demo && leadsCluster) {
      const answers = await loadDemo(database.db, { search: app.searchEngine, requestId: 'demo-load' });
      logger.info(
        {
          part: 'demo',
          collections: answers.map((a) => a.identity),
          skills: answers.flatMap((a) => a.skills).length,
        },
        'demo skills loaded',
      );
    }

    const address = await app.listen({ host: config.host, port: config.port });
    if (database.embeddedLock) {
      // The admin CLI reaches the embedded database through this hub while it runs (one owner, ever).
      const socketPath = adminSocketPath(config.dataDir);
      const socket = await startAdminSocket({
        socketPath,
        database,
        queue: crawler,
        logger: logger.child({ component: 'admin' }),
      });
      cleanups.push(() => socket.close());
      database.embeddedLock.update({ url: address, adminSocket: socketPath });
      logger.info(
        { part: 'admin', socket: socketPath },
        `admin CLI and \`npm run crawl\`: through ${socketPath} while this hub runs`,
      );
    }
    logger.info({ url: address, publicUrl: config.publicUrl }, `hub listening on ${address}`);
    if (workerId !== undefined) reportListening(address);
    if (workerId === 1) {
      // A restart (a stored index to load, so the model is stored too): the other workers start at once and
      // load beside this one. A first start: once both first builds ended (built and stored, or failed), so
      // that they load what this one stored instead of each building its own.
      const suggestBuilt = app.hasDecorator('suggestEngine') ? app.suggestEngine.firstBuild() : undefined;
      void app.searchIndexLoads
        .then((loads) => (loads ? undefined : Promise.all([app.searchIndexFirstBuild, suggestBuilt])))
        .then(reportStructuresReady);
    }

    let stopping: Promise<void> | undefined;
    return {
      app,
      url: address,
      logger,
      config,
      ops,
      shutdown(reason) {
        stopping ??= (async () => {
          logger.info({ reason, deadlineMs: ops.shutdownTimeoutMs }, 'shutting down');
          app.readiness.drain();
          // Reverse start order: the scheduler stops ticking; app.close() stops accepting and resolves once
          // in-flight requests have answered; then the dashboard queues, the crawler (running jobs get the
          // deadline), Redis and last the database everything above was still using.
          await closeAll();
          logger.info({ reason }, 'shut down');
        })();
        return stopping;
      },
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}

/**
 * Makes the data folder, a folder that cannot be made failing as a ConfigError naming ATSKILLS_DATA_DIR. Not
 * Node's recursive mkdir: where a folder cannot be made under an existing parent (/proc) it retries forever,
 * and the hub hung after its first log lines.
 */
export async function makeDataDir(dataDir: string): Promise<void> {
  try {
    await makeDirectory(path.resolve(dataDir));
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    throw new ConfigError(
      `Invalid configuration: ATSKILLS_DATA_DIR: cannot make the folder ${path.resolve(dataDir)} (${e.code ?? e.message})`,
    );
  }
}

/** Fails as a ConfigError naming HOST when HOST is a name that does not resolve. */
export async function checkHost(host: string): Promise<void> {
  if (isIP(host)) return;
  try {
    await lookup(host);
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    throw new ConfigError(
      `Invalid configuration: HOST: ${host} does not resolve (${e.code ?? e.message}); set HOST to an address of this machine (127.0.0.1, 0.0.0.0).`,
    );
  }
}

/** The Redis client of the API (rate-limit counters, readiness, scheduler, dashboard). */
function connectRedis(url: string, logger: Logger): Redis {
  // A few retries then an error: requests must not hang on a Redis outage (the rate limit fails open).
  const redis = new Redis(url, { maxRetriesPerRequest: 2, connectTimeout: 5_000 });
  let down = false;
  redis.on('error', (err) => {
    if (!down) logger.error({ err: { message: err.message } }, 'redis unreachable');
    down = true;
  });
  redis.on('ready', () => {
    if (down) logger.info('redis reachable again');
    down = false;
  });
  return redis;
}
