/**
 * `npm run bench -- suggest-overload [--loads 0.8,1.5,3] [--deadline-ms 400] [--seconds 20] [--rounds 2]`:
 * /v1/suggest pushed past what the hub can answer, as agents' hooks push it. Requests arrive at random
 * (Poisson, seeded) at a rate of `loads` times what the hub answers a second at c=16 (measured first): each
 * a judged message from a hook that waits at most its deadline (ATSKILLS_SUGGEST_TIMEOUT_MS, 400 ms by
 * default), then closes the connection and goes on without suggestions. A hook asks once per prompt, so
 * arrivals do not speed up when answers fail. Measured on one hub at the benchmark scale (read cache off),
 * with the deadline sent in `atskills-timeout-ms` and without it (the baseline, alternating in the same
 * run, the first of each round alternating): answers in time, refusals (503) and how fast they came, hooks that waited out their whole deadline
 * for nothing. Writes bench/results/suggest-overload.json.
 */
import { Agent, request } from 'node:http';
import { parseArgs } from 'node:util';
import { SUGGEST_TIMEOUT_HEADER } from '@atskills/protocol';
import { requireIndexedDatabase, treeMemory } from '../lib/env.js';
import { runLoad } from '../lib/load.js';
import { type BenchRow, writeResult } from '../lib/report.js';
import { Rng } from '../lib/rng.js';
import { startApi, waitForIndex, waitForMetric } from '../lib/servers.js';
import { median, percentile, round } from '../lib/stats.js';
import { loadMessages, MESSAGES_PATH, SUGGEST_LIMIT } from './messages.js';

interface Outcome {
  sent: number;
  /** 200 before the deadline: the hook appends suggestions. */
  inTime: number;
  /** 200 after it: the hook had gone on (never seen with the connection closed at the deadline). */
  late: number;
  /** 503 before the deadline: the hook goes on at once. */
  refused: number;
  /** No answer by the deadline: the hook waited it out for nothing. */
  timedOut: number;
  other: number;
  /** ms each refusal took. */
  refusedMs: number[];
  /** ms each answer in time took. */
  answeredMs: number[];
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      loads: { type: 'string', default: '0.8,1.5,3' },
      'deadline-ms': { type: 'string', default: '400' },
      seconds: { type: 'string', default: '20' },
      rounds: { type: 'string', default: '2' },
    },
  });
  const loads = values.loads.split(',').map(Number);
  const deadlineMs = Number(values['deadline-ms']);
  const seconds = Number(values.seconds);
  const rounds = Number(values.rounds);
  if (loads.some((n) => !(n > 0)) || !(deadlineMs > 0) || !(seconds > 0))
    throw new Error(
      '--loads takes multiples of capacity such as 0.8,1.5,3; --deadline-ms and --seconds positive numbers',
    );
  const messages = loadMessages(MESSAGES_PATH).map((j) => j.message);
  const url = await requireIndexedDatabase();
  const api = await startApi(url, { SEARCH_ENGINE: 'memory', READ_CACHE_MB: '0' });
  const table: BenchRow[] = [];
  const figures: Record<string, unknown>[] = [];
  try {
    await waitForIndex(api.url);
    await waitForMetric(api.url, 'atskills_suggest_model_ready', 1, 'its suggestion model');
    console.error('warming, then measuring capacity at c=16...');
    // One body per message, for the capacity run and the overload runs alike: both send the same request.
    const bodies = messages.map((message) => JSON.stringify({ message, limit: SUGGEST_LIMIT }));
    const requests = bodies.map((body) => ({ method: 'POST', path: '/v1/suggest', body }));
    await runLoad({ baseUrl: api.url, requests, concurrency: 16, total: requests.length * 2, warmup: 0 });
    const capacity = (
      await runLoad({ baseUrl: api.url, requests, concurrency: 16, total: requests.length * 3, warmup: 16 })
    ).requestsPerSecond;
    console.error(`capacity: ${round(capacity, 1)} suggestions/s`);
    const rng = new Rng(1);
    for (const load of loads) {
      const rate = load * capacity;
      const measured: Record<Mode, Outcome[]> = { baseline: [], header: [] };
      for (let r = 0; r < rounds; r++) {
        // ABBA: the mode measured first alternates, so neither gains from the other's order.
        for (const mode of r % 2 === 0 ? MODES : [...MODES].reverse()) {
          console.error(`round ${r + 1}/${rounds}: ${round(rate, 0)}/s (${load} x capacity), ${mode}...`);
          const arrivals = poissonArrivals(rng, rate, seconds);
          measured[mode].push(await overload(api.url, bodies, arrivals, deadlineMs, mode === 'header'));
          // Callers that left are dropped from the hub's queue when their connection closes; let it settle.
          await new Promise((resolve) => setTimeout(resolve, 2_000));
        }
      }
      for (const mode of MODES) {
        const runs = measured[mode];
        const med = (pick: (o: Outcome) => number) => round(median(runs.map(pick)), 3);
        const p = (values: number[], at: number) => (values.length ? percentile(values, at) : 0);
        const row = {
          load,
          offeredPerSecond: round(rate, 1),
          mode,
          inTimeShare: med((o) => o.inTime / o.sent),
          inTimePerSecond: med((o) => o.inTime / seconds),
          refusedShare: med((o) => o.refused / o.sent),
          timedOutShare: med((o) => o.timedOut / o.sent),
          sentByRound: runs.map((o) => o.sent),
          inTimeByRound: runs.map((o) => o.inTime),
          refusedByRound: runs.map((o) => o.refused),
          timedOutByRound: runs.map((o) => o.timedOut),
          lateByRound: runs.map((o) => o.late),
          otherByRound: runs.map((o) => o.other),
          refusedP50Ms: med((o) => p(o.refusedMs, 50)),
          refusedP99Ms: med((o) => p(o.refusedMs, 99)),
          answeredP50Ms: med((o) => p(o.answeredMs, 50)),
          answeredP99Ms: med((o) => p(o.answeredMs, 99)),
          // What a hook waited, on average, to end without suggestions (timed out or refused).
          waitedForNothingMeanMs: med((o) => {
            const failed = o.timedOut + o.refused;
            return failed ? (o.timedOut * deadlineMs + o.refusedMs.reduce((a, b) => a + b, 0)) / failed : 0;
          }),
        };
        figures.push(row);
        table.push({
          answered: `/v1/suggest at ${load} x capacity, ${deadlineMs} ms hooks`,
          kind: mode === 'header' ? SUGGEST_TIMEOUT_HEADER : 'no header',
          'in time': row.inTimeShare,
          'in time/s': round(row.inTimePerSecond, 1),
          refused: row.refusedShare,
          'timed out': row.timedOutShare,
          'answer p99': round(row.answeredP99Ms, 1),
          'refusal p99': round(row.refusedP99Ms, 1),
          'waited for nothing': round(row.waitedForNothingMeanMs, 1),
        });
      }
    }
    writeResult('suggest-overload', table, {
      deadlineMs,
      seconds,
      rounds,
      capacityPerSecond: round(capacity, 1),
      apiMemory: treeMemory(api.pid),
      figures,
    });
  } finally {
    await api.stop();
  }
}

type Mode = 'baseline' | 'header';
const MODES: Mode[] = ['baseline', 'header'];

/** Arrival times (ms from the start) of a Poisson process at `rate` a second over `seconds`. */
function poissonArrivals(rng: Rng, rate: number, seconds: number): number[] {
  const out: number[] = [];
  let t = 0;
  for (;;) {
    t += (-Math.log(1 - rng.next()) / rate) * 1000;
    if (t >= seconds * 1000) return out;
    out.push(t);
  }
}

/**
 * Sends one request at each arrival time on a new connection (an open loop: a failed request does not bring the next one
 * sooner), each given up (its connection destroyed) at `deadlineMs`, with the deadline in the header when
 * `withHeader`; resolves when every request has ended.
 */
async function overload(
  baseUrl: string,
  bodies: string[],
  arrivals: number[],
  deadlineMs: number,
  withHeader: boolean,
): Promise<Outcome> {
  const base = new URL(baseUrl);
  // A hook is a process of its own: a new connection each time.
  const agent = new Agent({ keepAlive: false });
  const outcome: Outcome = {
    sent: 0,
    inTime: 0,
    late: 0,
    refused: 0,
    timedOut: 0,
    other: 0,
    refusedMs: [],
    answeredMs: [],
  };
  const one = (body: string) =>
    new Promise<void>((resolve) => {
      outcome.sent++;
      const started = performance.now();
      let settled = false;
      const settle = (record: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        record();
        resolve();
      };
      const req = request(
        {
          agent,
          host: base.hostname,
          port: base.port,
          method: 'POST',
          path: '/v1/suggest',
          headers: {
            'content-type': 'application/json',
            ...(withHeader ? { [SUGGEST_TIMEOUT_HEADER]: String(deadlineMs) } : {}),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            settle(() => {
              const ms = performance.now() - started;
              if (res.statusCode === 200) {
                if (ms <= deadlineMs) {
                  outcome.inTime++;
                  outcome.answeredMs.push(ms);
                } else outcome.late++;
              } else if (res.statusCode === 503) {
                outcome.refused++;
                outcome.refusedMs.push(ms);
              } else outcome.other++;
            }),
          );
        },
      );
      const timer = setTimeout(() => {
        req.destroy();
        settle(() => outcome.timedOut++);
      }, deadlineMs);
      req.on('error', () => settle(() => outcome.other++));
      req.end(body);
    });
  const started = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < arrivals.length; i++) {
    const wait = arrivals[i]! - (performance.now() - started);
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    pending.push(one(bodies[i % bodies.length]!));
  }
  await Promise.all(pending);
  agent.destroy();
  return outcome;
}
