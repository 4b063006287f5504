/**
 * `API_WORKERS` > 1: this process becomes the primary of a node:cluster and forks that many hub processes
 * sharing its port (the primary holds the listening socket and hands connections round robin). Each is a
 * full replica, as behind a load balancer (docs/deploy.md): its own search index and suggestion model,
 * state in Postgres and Redis. A suggestion is answered on one event loop, so a machine's other cores serve
 * suggestions only through more processes. The primary runs no hub: it restarts a worker that dies, stops
 * them all on SIGTERM or SIGINT, and gathers every worker's metrics for whichever worker is scraped.
 */
import cluster, { type Worker } from 'node:cluster';
import { ConfigError } from '@atskills/protocol/config';
import { AggregatorRegistry } from 'prom-client';
import type { HubMetrics } from '../plugins/metrics.js';
import { MemoryWindows, type WindowCount, type WindowCounter } from '../services/rate-windows.js';
import { type HubSettings, loadHubSettings } from './hub-settings.js';
import { createHubLogger } from './logging.js';

/** The environment variable that tells a forked hub which worker it is (1..API_WORKERS). */
const WORKER_ID = 'ATSKILLS_WORKER_ID';
/** Restarts within RESTART_WINDOW_MS past which the primary gives up: a hub that keeps dying is broken. */
const MAX_RESTARTS = 5;
const RESTART_WINDOW_MS = 60_000;
const RESTART_DELAY_MS = 1_000;
/** prom-client's own cluster requests time out after 5 s; a worker waits a little longer for the primary. */
const METRICS_TIMEOUT_MS = 6_000;
/**
 * A rate-limit count the primary has not answered in this time counts nothing, as when Redis is away: a
 * request is never held up by its rate limit's bookkeeping.
 */
const RATE_COUNT_TIMEOUT_MS = 1_000;

type ClusterMessage =
  | { type: 'atskills:listening'; url: string }
  | { type: 'atskills:structures-ready' }
  | { type: 'atskills:metrics-request'; requestId: number }
  | { type: 'atskills:metrics'; requestId: number; body?: string; error?: string }
  | { type: 'atskills:rate-add'; requestId: number; key: string; units: number; timeWindow: number }
  | { type: 'atskills:rate-read'; requestId: number; key: string; timeWindow: number }
  | { type: 'atskills:rate-count'; requestId: number; current: number; ttl: number };
/** A worker's rate-limit request to the primary (see clusterWindows). */
type RateMessage = Extract<ClusterMessage, { type: 'atskills:rate-add' | 'atskills:rate-read' }>;
type WithoutRequestId<T> = T extends unknown ? Omit<T, 'requestId'> : never;

/**
 * How many hub processes to run, with the settings parsed for them: 1 and none in a forked worker (its
 * startHub parses them), else API_WORKERS. Parsed once here, so a bad setting fails with its name before
 * any worker starts; more than one needs a Postgres server (the embedded database is one process's).
 */
export function clusterPlan(env: Record<string, string | undefined>): {
  workers: number;
  settings?: HubSettings;
} {
  if (cluster.isWorker) return { workers: 1 };
  const settings = loadHubSettings(env);
  if (settings.ops.apiWorkers > 1 && !settings.config.databaseUrl) {
    throw new ConfigError(
      'Invalid configuration: API_WORKERS: more than one hub process needs DATABASE_URL (the embedded database belongs to one process); unset API_WORKERS or set DATABASE_URL',
    );
  }
  return { workers: settings.ops.apiWorkers, settings };
}

/** This process's worker number when it is one of a cluster's hubs, else undefined. */
export function clusterWorkerId(): number | undefined {
  return cluster.isWorker ? Number(process.env[WORKER_ID]) || cluster.worker?.id : undefined;
}

/**
 * Wires a worker's metrics into the cluster: its series carry `worker="<n>"`, it answers the primary's
 * requests for them, and a scrape of `/metrics` on it returns every worker's series (through the primary).
 */
export function joinClusterMetrics(metrics: HubMetrics, workerId: number): void {
  metrics.registry.setDefaultLabels({ worker: String(workerId) });
  AggregatorRegistry.setRegistries([metrics.registry]);
  // Constructing one installs prom-client's listener that answers the primary's requests in this worker.
  new AggregatorRegistry();
  let next = 0;
  metrics.setScrape(
    () =>
      new Promise<string>((resolve, reject) => {
        const requestId = next++;
        const timer = setTimeout(() => {
          process.off('message', onMessage);
          reject(new Error('the cluster primary did not gather the workers’ metrics in time'));
        }, METRICS_TIMEOUT_MS);
        const onMessage = (message: ClusterMessage) => {
          if (message?.type !== 'atskills:metrics' || message.requestId !== requestId) return;
          clearTimeout(timer);
          process.off('message', onMessage);
          if (message.error !== undefined) reject(new Error(message.error));
          else resolve(message.body ?? '');
        };
        process.on('message', onMessage);
        process.send?.({ type: 'atskills:metrics-request', requestId } satisfies ClusterMessage);
      }),
  );
}

/**
 * A worker's rate-limit counters when the hub has no Redis: kept by the primary, so that the hub's limit
 * holds for a caller whichever worker their connections reach (N workers counting apart would let N times
 * the limit through). One listener for every answer: the count is asked on every request.
 */
export function clusterWindows(): WindowCounter {
  /** The answer each request id waits for. */
  const pending = new Map<number, (count: WindowCount) => void>();
  let next = 0;
  process.on('message', (message: ClusterMessage) => {
    if (message?.type !== 'atskills:rate-count') return;
    const answer = pending.get(message.requestId);
    pending.delete(message.requestId);
    answer?.({ current: message.current, ttl: message.ttl });
  });
  const ask = (message: WithoutRequestId<RateMessage>) =>
    new Promise<WindowCount>((resolve, reject) => {
      if (!process.send || !process.connected) {
        reject(new Error('no cluster primary to count rate limits'));
        return;
      }
      const requestId = next++;
      const fail = (err: Error) => {
        clearTimeout(timer);
        pending.delete(requestId);
        reject(err);
      };
      const timer = setTimeout(
        () => fail(new Error('the cluster primary did not answer a rate-limit count in time')),
        RATE_COUNT_TIMEOUT_MS,
      );
      pending.set(requestId, (count) => {
        clearTimeout(timer);
        resolve(count);
      });
      process.send({ ...message, requestId } satisfies RateMessage, (err: Error | null) => {
        if (err) fail(err);
      });
    });
  return {
    add: (key, units, timeWindow) => ask({ type: 'atskills:rate-add', key, units, timeWindow }),
    read: (key, timeWindow) => ask({ type: 'atskills:rate-read', key, timeWindow }),
  };
}

/** Tells the primary this worker listens (the primary logs once all do). */
export function reportListening(url: string): void {
  process.send?.({ type: 'atskills:listening', url } satisfies ClusterMessage);
}

/**
 * Tells the primary the other workers may start: this worker found a stored search index to load (a
 * restart), or its first builds of the index and the model ended (stored, or failed); they load what is
 * stored.
 */
export function reportStructuresReady(): void {
  process.send?.({ type: 'atskills:structures-ready' } satisfies ClusterMessage);
}

/**
 * Runs the primary: forks `workers` hubs (each runs this same entry as a worker; the first alone until its
 * search index and suggestion model are ready, so that the others load what it stored), restarts one that
 * dies after it listened, and a replacement that fails (at most MAX_RESTARTS a minute), stops all and exits
 * 1 when a first start fails, and on SIGTERM/SIGINT stops them (each drains as a single hub does) and
 * exits 0 once all exited cleanly.
 */
export function runClusterPrimary(workers: number, settings: HubSettings): void {
  const logger = createHubLogger(settings.config.logLevel);
  const { shutdownTimeoutMs } = settings.ops;
  const aggregator = new AggregatorRegistry();
  /** The workers' rate-limit counters when there is no Redis (see clusterWindows). */
  const rateWindows = new MemoryWindows();
  const running = new Map<Worker, { id: number; listening: boolean; replacement: boolean }>();
  let restarts: number[] = [];
  let stopping = false;
  let exitCode = 0;
  let announced = false;
  let othersForked = false;

  const fork = (id: number, replacement = false) => {
    running.set(cluster.fork({ [WORKER_ID]: String(id) }), { id, listening: false, replacement });
  };
  const exitWhenDone = () => {
    if (stopping && running.size === 0) {
      logger.info({ exitCode }, 'all hub workers stopped');
      process.exit(exitCode);
    }
  };
  const stop = (reason: string, code = 0) => {
    exitCode = Math.max(exitCode, code);
    if (stopping) return;
    stopping = true;
    logger.info({ reason, workers: running.size }, 'stopping the hub workers');
    for (const worker of running.keys()) worker.process.kill('SIGTERM');
    // Each worker ends itself past its own deadline; this is the net under a worker that hangs anyway.
    setTimeout(() => {
      logger.error(
        { workers: running.size },
        'hub workers still running past the shutdown deadline, killing them',
      );
      for (const worker of running.keys()) worker.process.kill('SIGKILL');
      process.exit(1);
    }, shutdownTimeoutMs + 10_000).unref();
    exitWhenDone();
  };

  cluster.on('message', (worker, message: ClusterMessage) => {
    const state = running.get(worker);
    if (message?.type === 'atskills:listening' && state) {
      state.listening = true;
      if (state.replacement) {
        logger.info({ worker: state.id, url: message.url }, 'a replacement hub worker listens');
      } else if (!announced && running.size === workers && [...running.values()].every((s) => s.listening)) {
        announced = true;
        logger.info({ url: message.url, workers }, `hub listening on ${message.url} (${workers} workers)`);
      }
    } else if (
      message?.type === 'atskills:structures-ready' &&
      state?.id === 1 &&
      !othersForked &&
      !stopping
    ) {
      othersForked = true;
      logger.info(
        { workers: workers - 1 },
        'worker 1 loaded or built its search index and suggestion model: starting the others',
      );
      for (let id = 2; id <= workers; id++) fork(id);
    } else if (message?.type === 'atskills:rate-add' || message?.type === 'atskills:rate-read') {
      const count =
        message.type === 'atskills:rate-add'
          ? rateWindows.addNow(message.key, message.units, message.timeWindow)
          : rateWindows.readNow(message.key, message.timeWindow);
      if (worker.isConnected()) {
        worker.send({
          type: 'atskills:rate-count',
          requestId: message.requestId,
          ...count,
        } satisfies ClusterMessage);
      }
    } else if (message?.type === 'atskills:metrics-request') {
      aggregator.clusterMetrics().then(
        (body) => worker.send({ type: 'atskills:metrics', requestId: message.requestId, body }),
        (err: Error) =>
          worker.send({ type: 'atskills:metrics', requestId: message.requestId, error: err.message }),
      );
    }
  });

  cluster.on('exit', (worker, code, signal) => {
    const state = running.get(worker);
    running.delete(worker);
    if (!state) return;
    if (stopping) {
      // A worker still starting has no handler yet: the SIGTERM sent to it ends it, which is no failure.
      if (code !== 0 && signal !== 'SIGTERM') exitCode = 1;
      exitWhenDone();
      return;
    }
    if (!state.listening && !state.replacement) {
      // It said why on its stderr (server.ts's one line); the others would fail the same way. A replacement
      // that cannot start (the database down a moment) is retried below, within the restart budget.
      logger.error({ worker: state.id, code, signal }, 'a hub worker failed to start; stopping the others');
      stop('a worker failed to start', 1);
      return;
    }
    const now = Date.now();
    restarts = restarts.filter((at) => now - at < RESTART_WINDOW_MS);
    restarts.push(now);
    if (restarts.length > MAX_RESTARTS) {
      logger.error(
        { worker: state.id, code, signal, restarts: restarts.length },
        'hub workers keep dying; stopping',
      );
      stop('workers keep dying', 1);
      return;
    }
    logger.error({ worker: state.id, code, signal }, 'a hub worker exited; starting another in its place');
    setTimeout(() => {
      if (!stopping) fork(state.id, true);
    }, RESTART_DELAY_MS);
  });

  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  // Worker 1 first: on a first start it builds the search index and the suggestion model and stores them
  // (about 85-130 s and 1.6-2.4 GiB at 54,000 skills), and the others then load them (about 25 s, 1 GiB each)
  // instead of each building its own at once; on a restart (a stored index to load) the others start at once.
  logger.info(
    { workers },
    `starting ${workers} hub workers, the first alone until its index and model are ready`,
  );
  fork(1);
}
