/** The two servers the HTTP benchmarks measure, each as a child process: the hub API and the floor. */
import path from 'node:path';
import { type ChildServer, repoRoot, startChildServer } from './env.js';

/** The hub (apps/api/src/server.ts) over the benchmark database; no rate limit, no scheduled re-crawls. */
export function startApi(databaseUrl: string, extraEnv: Record<string, string> = {}): Promise<ChildServer> {
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
  return startChildServer(path.join(repoRoot, 'apps/api/src/server.ts'), env, '/healthz');
}

/** The framework floor (bench/lib/floor-server.ts) answering `bytes` of fixed JSON. */
export function startFloor(bytes: number): Promise<ChildServer> {
  return startChildServer(path.join(repoRoot, 'bench/lib/floor-server.ts'), { FLOOR_BYTES: String(bytes) });
}
