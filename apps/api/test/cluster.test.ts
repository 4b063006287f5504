// API_WORKERS: the hub as a node:cluster of replicas sharing one port, started as a real process
// (server.ts), against a Postgres server: the first worker builds and stores, the second loads, both
// answer, /metrics gathers both, a worker that dies is replaced, SIGTERM stops them all with exit 0, rate
// limits hold for the hub as a whole without Redis, and the settings that cannot work are refused.
import { readFileSync } from 'node:fs';
import { get } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { eventually } from '../../../test/support/eventually.js';
import { type HubProcess, startHubProcess, stopHubProcess } from '../../../test/support/hub-process.js';

let db: TestDatabase;
let hub: HubProcess | undefined;

function clusterEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    DATABASE_URL: db.url,
    REDIS_URL: '',
    MEILI_URL: '',
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'info',
    METRICS_PUBLIC: 'true',
    RATE_LIMIT_MAX: '0',
    RECRAWL_TICK_MS: '0',
    API_WORKERS: '2',
    ...extra,
  };
}

/** A GET on a connection of its own (the primary hands connections, not requests, round robin). */
function freshGet(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}

/** Searches each worker answered, read from the gathered metrics. */
async function searchesByWorker(url: string): Promise<Map<string, number>> {
  const text = (await freshGet(`${url}/metrics`)).body;
  const out = new Map<string, number>();
  const line = /^atskills_http_request_duration_seconds_count\{([^}]*)\} (\d+)$/gm;
  for (const [, labels, count] of text.matchAll(line)) {
    if (!labels!.includes('route="/v1/search"')) continue;
    const worker = /worker="(\d+)"/.exec(labels!)?.[1] ?? '?';
    out.set(worker, (out.get(worker) ?? 0) + Number(count));
  }
  return out;
}

/** Whether cluster worker `worker` of `hub` logged the message `msg`. */
function workerLogged(hub: HubProcess, worker: number, msg: string): boolean {
  return hub
    .output()
    .split('\n')
    .some((l) => l.includes(`"worker":${worker},`) && l.includes(`"msg":"${msg}"`));
}

function childPids(pid: number): number[] {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map(Number);
}

beforeAll(async () => {
  db = await createTestDatabase('cluster');
}, 60_000);

afterAll(async () => {
  await stopHubProcess(hub);
  await db?.drop();
});

describe('API_WORKERS', () => {
  it('runs replicas on one port: both answer, /metrics gathers both, a dead worker is replaced, SIGTERM stops all', async () => {
    hub = await startHubProcess(clusterEnv());
    const url = hub.url;
    const primary = hub.child.pid!;
    // The first worker's listening line let this test in; the primary says when both listen.
    const started = hub;
    await eventually(
      async () => started.output().includes(`"msg":"hub listening on ${url} (2 workers)"`),
      60_000,
    ).catch(() => {
      throw new Error(
        `both workers did not listen within 60 s; the hub wrote:\n${started.output().slice(-4000)}`,
      );
    });
    expect(childPids(primary)).toHaveLength(2);
    // Worker 1 built and stored the search index and the model alone; worker 2 started then and loaded both.
    const lines = started.output().split('\n');
    const othersStarted = lines.findIndex((l) =>
      l.includes('"msg":"worker 1 loaded or built its search index and suggestion model'),
    );
    const firstOfWorker2 = lines.findIndex((l) => l.includes('"worker":2,'));
    expect(othersStarted).toBeGreaterThanOrEqual(0);
    expect(firstOfWorker2).toBeGreaterThan(othersStarted);
    for (const structure of ['in-memory search index', 'suggestion model']) {
      expect(workerLogged(started, 1, `${structure}: snapshot stored`)).toBe(true);
      await eventually(async () => workerLogged(started, 2, `${structure}: snapshot restored`));
    }

    // Every request answers, and connections reach both workers.
    for (let i = 0; i < 16; i++) {
      expect((await freshGet(`${url}/v1/search?q=review`)).status).toBe(200);
    }
    await eventually(async () => {
      expect((await freshGet(`${url}/v1/search?q=review`)).status).toBe(200);
      return (await searchesByWorker(url)).size === 2;
    }, 10_000);
    const counted = await searchesByWorker(url);
    expect([...counted.keys()].sort()).toEqual(['1', '2']);
    expect([...counted.values()].reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(16);

    // Process series come from each worker; figures read from shared state (queues) from the first only.
    const metrics = (await freshGet(`${url}/metrics`)).body;
    expect(metrics).toMatch(/^atskills_process_resident_memory_bytes\{worker="1"\} \d+/m);
    expect(metrics).toMatch(/^atskills_process_resident_memory_bytes\{worker="2"\} \d+/m);
    const queueLines = metrics.split('\n').filter((l) => l.startsWith('atskills_queue_jobs{'));
    expect(queueLines.length).toBeGreaterThan(0);
    expect(queueLines.every((l) => l.includes('worker="1"'))).toBe(true);

    // A worker killed outright is replaced; the hub answers throughout.
    const [victim] = childPids(primary);
    process.kill(victim!, 'SIGKILL');
    await eventually(
      async () => started.output().includes('"msg":"a replacement hub worker listens"'),
      30_000,
    );
    const now = childPids(primary);
    expect(now).toHaveLength(2);
    expect(now).not.toContain(victim);
    for (let i = 0; i < 4; i++) expect((await freshGet(`${url}/v1/search?q=review`)).status).toBe(200);

    // SIGTERM: every worker drains and exits, then the primary exits 0.
    const workers = childPids(primary);
    hub.child.kill('SIGTERM');
    expect(await hub.exited).toBe(0);
    for (const pid of workers) expect(() => process.kill(pid, 0)).toThrow();
    hub = undefined;

    // A restart finds both stored: worker 2 starts without waiting for worker 1's builds, and both load both.
    hub = await startHubProcess(clusterEnv({ RATE_LIMIT_MAX: '5' }));
    const restarted = hub;
    await eventually(async () => restarted.output().includes('(2 workers)"'), 60_000);
    for (const id of [1, 2]) {
      for (const structure of ['in-memory search index', 'suggestion model']) {
        await eventually(async () => workerLogged(restarted, id, `${structure}: snapshot restored`));
      }
    }
    expect(restarted.output()).not.toContain('snapshot stored');

    // Without Redis the workers count rate limits together (in the primary): a caller whose connections
    // reach both gets the hub's limit, not the limit once per worker.
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await freshGet(`${hub.url}/v1/search?q=review`)).status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.slice(5)).toEqual([429, 429, 429, 429, 429]);
    expect([...(await searchesByWorker(hub.url)).keys()].sort()).toEqual(['1', '2']);
    await stopHubProcess(restarted);
    expect(await restarted.exited).toBe(0);
    hub = undefined;
  }, 180_000);

  it('refuses more than one worker on the embedded database, naming the setting', async () => {
    const refused = await startHubProcess(
      clusterEnv({ DATABASE_URL: '', ATSKILLS_DATA_DIR: '/nonexistent' }),
    ).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );
    expect(refused?.code).toBe(1);
    expect(refused?.stderr).toMatch(/^error: Invalid configuration: API_WORKERS: .*DATABASE_URL/m);
  });

  it('stops when its workers cannot start, with their one-line reason', async () => {
    const missing = db.url.replace(/\/[^/]+$/, '/atskills_no_such_database');
    const refused = await startHubProcess(clusterEnv({ DATABASE_URL: missing })).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );
    expect(refused?.code).toBe(1);
    expect(refused?.stderr).toMatch(/^error: .*"atskills_no_such_database" does not exist/m);
  }, 60_000);
});
