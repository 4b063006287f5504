/**
 * A small closed-loop HTTP load generator: `concurrency` workers each send the next request of a list as
 * soon as their previous one answered, over keep-alive connections. Hand-written on node:http rather than
 * autocannon because the reports need every latency (p95) and per-request variety (300 distinct queries,
 * conditional headers). It runs in the benchmark process; the server under test runs in another process,
 * so the two do not share an event loop.
 */
import { Agent, request } from 'node:http';
import { cpuTimes, stolenShare } from './cpu-steal.js';
import { latencySummary, round } from './stats.js';

/** One request to send. */
export interface LoadRequest {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadOptions {
  baseUrl: string;
  requests: LoadRequest[];
  concurrency: number;
  /** Total requests to send (cycling through `requests`). */
  total: number;
  /** Requests sent first and not measured (connections, JIT, caches). */
  warmup?: number;
  /** Reuse connections (default); false opens one per request, like a fresh client process does. */
  keepAlive?: boolean;
}

export interface LoadResult {
  concurrency: number;
  count: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  requestsPerSecond: number;
  /**
   * Share of the machine's CPU time the host stole while the measured requests ran (cpu-steal.ts; null off
   * Linux): a run with steal measured the machine's neighbours as much as the code.
   */
  stolen: number | null;
  statuses: Record<string, number>;
  /** Body bytes received, on average. */
  meanBodyBytes: number;
}

function send(agent: Agent, base: URL, r: LoadRequest): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        host: base.hostname,
        port: base.port,
        method: r.method ?? 'GET',
        path: r.path,
        headers: r.body ? { 'content-type': 'application/json', ...r.headers } : r.headers,
      },
      (res) => {
        let bytes = 0;
        res.on('data', (d: Buffer) => {
          bytes += d.length;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(r.body);
  });
}

/** Runs a closed loop and summarises latencies (ms) and throughput. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const base = new URL(options.baseUrl);
  const agent = new Agent({ keepAlive: options.keepAlive ?? true, maxSockets: options.concurrency });
  const statuses: Record<string, number> = {};
  let bytes = 0;
  try {
    const summary = await runCallLoad(
      (i) => send(agent, base, options.requests[i % options.requests.length]!),
      options,
      (answer) => {
        statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
        bytes += answer.bytes;
      },
    );
    return { ...summary, statuses, meanBodyBytes: Math.round(bytes / Math.max(1, summary.count)) };
  } finally {
    agent.destroy();
  }
}

/**
 * The closed loop itself, over any async call (runLoad's requests, the direct-SQL baseline): an unmeasured
 * warm-up, then `total` measured calls whose answers go to `onMeasured`.
 */
export async function runCallLoad<T>(
  call: (i: number) => Promise<T>,
  options: { concurrency: number; total: number; warmup?: number },
  onMeasured?: (answer: T) => void,
): Promise<Omit<LoadResult, 'statuses' | 'meanBodyBytes'>> {
  const phase = async (total: number, measured: boolean) => {
    const latencies: number[] = [];
    let next = 0;
    const worker = async () => {
      for (;;) {
        const i = next++;
        if (i >= total) return;
        const started = performance.now();
        const answer = await call(i);
        if (!measured) continue;
        latencies.push(performance.now() - started);
        onMeasured?.(answer);
      }
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: options.concurrency }, worker));
    return { latencies, seconds: (performance.now() - started) / 1000 };
  };
  await phase(options.warmup ?? Math.min(options.total, Math.max(50, options.concurrency * 4)), false);
  const before = cpuTimes();
  const m = await phase(options.total, true);
  const stolen = stolenShare(before, cpuTimes());
  const s = latencySummary(m.latencies);
  return {
    concurrency: options.concurrency,
    count: s.count,
    p50: s.p50,
    p95: s.p95,
    p99: s.p99,
    max: s.max,
    requestsPerSecond: round(m.latencies.length / m.seconds, 1),
    stolen: stolen === null ? null : round(stolen, 3),
  };
}
