/**
 * `npm run bench -- suggest-overload [--clients 32,64,128] [--deadline-ms 800] [--seconds 20] [--rounds 2]`:
 * /v1/suggest pushed past what the hub can answer, as agents' hooks push it. Each client sends a judged
 * message, waits at most the hook's deadline (then closes the connection and goes on without suggestions),
 * and asks again at once. Measured per round, on one hub at the benchmark scale (read cache off), with the
 * deadline sent in `atskills-timeout-ms` and without it (the baseline, alternating in the same run):
 * answers in time, refusals (503) and how fast they came, callers that waited out their whole deadline for
 * nothing, and the hub's requests answered per second. Writes bench/results/suggest-overload.json.
 */
import { Agent, request } from 'node:http';
import { parseArgs } from 'node:util';
import { SUGGEST_TIMEOUT_HEADER } from '@atskills/protocol';
import { requireIndexedDatabase, treeMemory } from '../lib/env.js';
import { type BenchRow, writeResult } from '../lib/report.js';
import { startApi, waitForIndex, waitForMetric } from '../lib/servers.js';
import { median, percentile, round } from '../lib/stats.js';
import { loadMessages, MESSAGES_PATH } from './messages.js';

interface Outcome {
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
      clients: { type: 'string', default: '32,64,128' },
      'deadline-ms': { type: 'string', default: '800' },
      seconds: { type: 'string', default: '20' },
      rounds: { type: 'string', default: '2' },
    },
  });
  const clientCounts = values.clients.split(',').map(Number);
  const deadlineMs = Number(values['deadline-ms']);
  const seconds = Number(values.seconds);
  const rounds = Number(values.rounds);
  if (clientCounts.some((n) => !Number.isInteger(n) || n < 1) || !(deadlineMs > 0) || !(seconds > 0))
    throw new Error('--clients takes counts such as 32,64; --deadline-ms and --seconds positive numbers');
  const messages = loadMessages(MESSAGES_PATH).map((j) => j.message);
  const url = await requireIndexedDatabase();
  const api = await startApi(url, { SEARCH_ENGINE: 'memory', READ_CACHE_MB: '0' });
  const table: BenchRow[] = [];
  const figures: Record<string, unknown>[] = [];
  try {
    await waitForIndex(api.url);
    await waitForMetric(api.url, 'atskills_suggest_model_ready', 1, 'its suggestion model');
    console.error('warming...');
    await overload(api.url, messages, 16, 10_000, 5, false);
    for (const clients of clientCounts) {
      const measured: Record<'header' | 'baseline', Outcome[]> = { header: [], baseline: [] };
      for (let r = 0; r < rounds; r++) {
        for (const mode of ['baseline', 'header'] as const) {
          console.error(`round ${r + 1}/${rounds}: ${clients} clients, ${mode}...`);
          measured[mode].push(
            await overload(api.url, messages, clients, deadlineMs, seconds, mode === 'header'),
          );
          // Let the callers that left drain from the hub before the next run.
          await new Promise((resolve) => setTimeout(resolve, 2_000));
        }
      }
      for (const mode of ['baseline', 'header'] as const) {
        const runs = measured[mode];
        const med = (pick: (o: Outcome) => number) => round(median(runs.map(pick)), 1);
        const row = {
          clients,
          mode,
          inTimePerSecond: med((o) => o.inTime / seconds),
          inTimeByRound: runs.map((o) => o.inTime),
          refusedByRound: runs.map((o) => o.refused),
          timedOutByRound: runs.map((o) => o.timedOut),
          lateByRound: runs.map((o) => o.late),
          otherByRound: runs.map((o) => o.other),
          refusedP50Ms: med((o) => (o.refusedMs.length ? percentile(o.refusedMs, 50) : 0)),
          refusedP99Ms: med((o) => (o.refusedMs.length ? percentile(o.refusedMs, 99) : 0)),
          answeredP50Ms: med((o) => (o.answeredMs.length ? percentile(o.answeredMs, 50) : 0)),
          answeredP99Ms: med((o) => (o.answeredMs.length ? percentile(o.answeredMs, 99) : 0)),
          // What the hooks spent waiting without getting suggestions, per second of the run.
          waitedForNothingSecondsPerSecond: med(
            (o) => (o.timedOut * deadlineMs + o.refusedMs.reduce((a, b) => a + b, 0)) / 1000 / seconds,
          ),
        };
        figures.push(row);
        table.push({
          answered: `/v1/suggest, ${clients} clients, ${deadlineMs} ms deadline${mode === 'header' ? `, ${SUGGEST_TIMEOUT_HEADER}` : ''}`,
          kind: mode,
          'in time/s': row.inTimePerSecond,
          refused: median(row.refusedByRound),
          'timed out': median(row.timedOutByRound),
          'answer p99': row.answeredP99Ms,
          'refusal p99': row.refusedP99Ms,
        });
      }
    }
    writeResult('suggest-overload', table, {
      deadlineMs,
      seconds,
      rounds,
      apiMemory: treeMemory(api.pid),
      figures,
    });
  } finally {
    await api.stop();
  }
}

/**
 * `clients` closed loops for `seconds`, each request given up (its connection destroyed) at `deadlineMs`,
 * sending the deadline in the header when `withHeader`.
 */
async function overload(
  baseUrl: string,
  messages: string[],
  clients: number,
  deadlineMs: number,
  seconds: number,
  withHeader: boolean,
): Promise<Outcome> {
  const base = new URL(baseUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  const outcome: Outcome = {
    inTime: 0,
    late: 0,
    refused: 0,
    timedOut: 0,
    other: 0,
    refusedMs: [],
    answeredMs: [],
  };
  const until = performance.now() + seconds * 1000;
  let next = 0;
  const one = (message: string) =>
    new Promise<void>((resolve) => {
      const started = performance.now();
      const body = JSON.stringify({ message, limit: 5 });
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
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < until) await one(messages[next++ % messages.length]!);
    }),
  );
  agent.destroy();
  return outcome;
}
