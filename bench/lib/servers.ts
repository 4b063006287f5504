/** The two servers the HTTP benchmarks measure, each as a child process: the hub API and the floor. */
import path from 'node:path';
import { type ChildServer, repoRoot, startChildServer } from './env.js';

/**
 * The hub (apps/api/src/server.ts of this checkout, or of `root`: another checkout, for A/B runs) over the
 * benchmark database; no rate limit, no scheduled re-crawls.
 */
export function startApi(
  databaseUrl: string,
  extraEnv: Record<string, string> = {},
  root = repoRoot,
): Promise<ChildServer> {
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'warn',
    // 600 requests a minute per client is a production guard; a load test from one address would hit it.
    RATE_LIMIT_MAX: '0',
    // The search benchmark reads the read-cache counters from /metrics.
    METRICS_PUBLIC: 'true',
    RECRAWL_TICK_MS: '0',
    REDIS_URL: '',
    ATSKILLS_DATA_DIR: path.join(repoRoot, 'bench', 'work', 'hub-data'),
    ...extraEnv,
  };
  if (!process.env.MEILI_URL) env.MEILI_URL = '';
  return startChildServer(path.join(root, 'apps/api/src/server.ts'), env, '/healthz', root);
}

/** The framework floor (bench/lib/floor-server.ts) answering `bytes` of fixed JSON. */
export function startFloor(bytes: number): Promise<ChildServer> {
  return startChildServer(path.join(repoRoot, 'bench/lib/floor-server.ts'), { FLOOR_BYTES: String(bytes) });
}

/**
 * Waits until the API's in-memory index serves (in each of `workers` processes with API_WORKERS, whose
 * series carry a worker label); returns its build time (s) as /metrics reports it (the longest).
 */
export async function waitForIndex(baseUrl: string, workers = 1): Promise<number> {
  const text = await waitForMetric(baseUrl, 'atskills_search_index_ready', workers, 'its search index');
  return Math.max(0, ...metricValues(text, 'atskills_search_index_build_seconds'));
}

/**
 * Waits until the 0/1 gauge `name` is 1 in each of `workers` hub processes (30 minutes at most); returns
 * the /metrics text that said so.
 */
export async function waitForMetric(
  baseUrl: string,
  name: string,
  workers: number,
  what: string,
): Promise<string> {
  const deadline = Date.now() + 30 * 60_000;
  while (Date.now() < deadline) {
    const text = await (await fetch(`${baseUrl}/metrics`)).text();
    if (setInEvery(text, name, workers)) return text;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`the API did not finish building ${what}`);
}

/** Whether the 0/1 gauge `name` is 1 in at least `workers` series of a Prometheus exposition. */
export function setInEvery(text: string, name: string, workers: number): boolean {
  return metricValues(text, name).filter((v) => v === 1).length >= workers;
}

/** The values of a metric's series in a Prometheus exposition, labelled or not (one per cluster worker). */
export function metricValues(text: string, name: string): number[] {
  const line = new RegExp(`^${name}(?:\\{[^}]*\\})? ([\\d.e+-]+)$`, 'gm');
  return [...text.matchAll(line)].map((m) => Number(m[1]));
}
