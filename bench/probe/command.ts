/**
 * `npm run bench -- probe [--total 5000] [--samples 40] [--against DIR] [--rounds N]`: the validating cache's revision probe on
 * /v1/skills/<identity>: HEAD and GET with If-None-Match (answered 304) at concurrency 64 against the same
 * requests to the bare-Fastify floor; then one probe at a time against `git ls-remote` of the same skill's
 * repository on the stand-in's git server (what a `gh:` probe costs the client). The first pass after start
 * is reported on its own rows; `--against <checkout>` runs another checkout's hubs in the same rounds.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { startGithubStandin } from '../../test/support/github-standin.js';
import { corpusDir, indexedSkills, requireIndexedDatabase } from '../lib/env.js';
import { pickSkills, skillPath } from '../lib/identities.js';
import { type LoadRequest, runLoad } from '../lib/load.js';
import { type BenchRow, writeResult } from '../lib/report.js';
import { startApi, startFloor } from '../lib/servers.js';
import { latencySummary, median, round } from '../lib/stats.js';

const execFileAsync = promisify(execFile);

type LoadSummary = Awaited<ReturnType<typeof runLoad>>;

/** The median of each figure over several passes of one row (statuses summed). */
function medianLoad(passes: LoadSummary[]): LoadSummary {
  if (passes.length === 1) return passes[0]!;
  const of = (pick: (p: LoadSummary) => number) => round(median(passes.map(pick)));
  const statuses: Record<string, number> = {};
  for (const p of passes)
    for (const [k, v] of Object.entries(p.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
  return {
    ...passes[0]!,
    requestsPerSecond: of((p) => p.requestsPerSecond),
    p50: of((p) => p.p50),
    p99: of((p) => p.p99),
    count: passes.reduce((n, p) => n + p.count, 0),
    statuses,
  };
}
const FLOOR_ETAG = '"floor-revision"';

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      total: { type: 'string', default: '5000' },
      samples: { type: 'string', default: '40' },
      concurrency: { type: 'string', default: '64' },
      against: { type: 'string' },
      rounds: { type: 'string', default: '1' },
    },
  });
  const total = Number(values.total);
  const concurrency = Number(values.concurrency);
  const url = await requireIndexedDatabase();
  const skills = await pickSkills(url, 256);
  const head = skills.map((s): LoadRequest => ({ method: 'HEAD', path: skillPath(s.identity) }));
  const conditional = skills.map(
    (s): LoadRequest => ({ path: skillPath(s.identity), headers: { 'if-none-match': `"${s.revision}"` } }),
  );
  const rows: BenchRow[] = [];
  // Probes never search: both hubs search with Postgres, so no in-memory index build (a minute of CPU at
  // full scale, in each of the two processes) competes with the measured load.
  const api = await startApi(url, { SEARCH_ENGINE: 'postgres' });
  // Every probe of the cache-off hub reads its revision from Postgres (a cold cache, or an index that
  // changes between probes); the default hub answers repeated probes from its read cache.
  const uncachedApi = await startApi(url, { READ_CACHE_MB: '0', SEARCH_ENGINE: 'postgres' });
  // `--against <checkout>`: the same hubs from another checkout (say, main before a change), measured by
  // this same benchmark in the same rounds, so a regression is told from a noisy machine.
  const againstRoot = values.against ? path.resolve(values.against) : undefined;
  const againstApi = againstRoot
    ? await startApi(url, { SEARCH_ENGINE: 'postgres' }, againstRoot)
    : undefined;
  const againstUncached = againstRoot
    ? await startApi(url, { READ_CACHE_MB: '0', SEARCH_ENGINE: 'postgres' }, againstRoot)
    : undefined;
  const floor = await startFloor(2048);
  const standin = await startGithubStandin({ reposRoot: path.join(corpusDir, 'repos') });
  try {
    const pairs: [string, LoadRequest[], LoadRequest[]][] = [
      ['HEAD', head, head.map((r) => ({ ...r, path: '/v1/skills/x' }))],
      [
        'GET If-None-Match -> 304',
        conditional,
        conditional.map((r) => ({ ...r, path: '/v1/skills/x', headers: { 'if-none-match': FLOOR_ETAG } })),
      ],
    ];
    const variants = [
      { suffix: '', server: api },
      { suffix: ' (read cache off)', server: uncachedApi },
      ...(againstApi && againstUncached
        ? [
            { suffix: ' [against]', server: againstApi },
            { suffix: ' (read cache off) [against]', server: againstUncached },
          ]
        : []),
    ];
    const row = (
      label: string,
      a: Awaited<ReturnType<typeof runLoad>>,
      f: Awaited<ReturnType<typeof runLoad>>,
    ) => {
      const expected = label.includes('HEAD') ? '200' : '304';
      rows.push({
        probe: label,
        concurrency,
        'API req/s': a.requestsPerSecond,
        'floor req/s': f.requestsPerSecond,
        'x floor': round(a.requestsPerSecond / f.requestsPerSecond, 2),
        'API p50': a.p50,
        'API p99': a.p99,
        'floor p50': f.p50,
        [`API answers ${expected}`]: `${a.statuses[expected] ?? 0}/${a.count}`,
      });
    };
    // The first pass of the whole mix per server, measured (a hub just started: JIT, connection pools and
    // the read cache still settling) and then the measured passes of a settled server, so the first
    // measured row is not also the warm-up.
    const firstTotal = Math.min(total, 2000);
    for (const [label, apiRequests, floorRequests] of pairs) {
      const f = await runLoad({
        baseUrl: floor.url,
        requests: floorRequests,
        concurrency,
        total: firstTotal,
      });
      for (const { suffix, server } of variants) {
        console.error(`first pass: ${label}${suffix} at concurrency ${concurrency}...`);
        const a = await runLoad({
          baseUrl: server.url,
          requests: apiRequests,
          concurrency,
          total: firstTotal,
        });
        row(`first pass: ${label}${suffix}`, a, f);
      }
    }
    // `--rounds N`: the measured passes N times over, every server in each round, and the median of each
    // figure reported (on a shared machine one pass of a row can land in a slow moment of the other's).
    const rounds = Math.max(1, Number(values.rounds));
    const measured = new Map<string, { a: LoadSummary[]; f: LoadSummary[] }>();
    for (let round = 0; round < rounds; round++)
      for (const [label, apiRequests, floorRequests] of pairs)
        for (const { suffix, server } of variants) {
          console.error(
            `${label}${suffix} at concurrency ${concurrency} (round ${round + 1} of ${rounds})...`,
          );
          const a = await runLoad({ baseUrl: server.url, requests: apiRequests, concurrency, total });
          const f = await runLoad({ baseUrl: floor.url, requests: floorRequests, concurrency, total });
          const held = measured.get(`${label}${suffix}`) ?? { a: [], f: [] };
          held.a.push(a);
          held.f.push(f);
          measured.set(`${label}${suffix}`, held);
        }
    for (const [label, { a, f }] of measured) row(label, medianLoad(a), medianLoad(f));

    // One probe at a time: the client's view of a single revalidation.
    const samples = Number(values.samples);
    const sample = skills.slice(0, samples);
    console.error(`${samples} single probes: hub (keep-alive and new connection) vs git ls-remote...`);
    const warm = await runLoad({
      baseUrl: api.url,
      requests: conditional.slice(0, samples),
      concurrency: 1,
      total: samples,
    });
    const cold = await runLoad({
      baseUrl: api.url,
      requests: conditional.slice(0, samples),
      concurrency: 1,
      total: samples,
      keepAlive: false,
    });
    const lsRemote: number[] = [];
    for (const s of sample) {
      const started = performance.now();
      await execFileAsync('git', ['ls-remote', `${standin.gitUrl}/${s.owner}/${s.container}.git`, 'HEAD'], {
        env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
      });
      lsRemote.push(performance.now() - started);
    }
    const ls = latencySummary(lsRemote);
    rows.push(
      {
        probe: 'single hub probe (keep-alive)',
        concurrency: 1,
        'API p50': warm.p50,
        'API p99': warm.p99,
        'x faster than ls-remote (p50)': round(ls.p50 / warm.p50, 1),
      },
      {
        probe: 'single hub probe (new connection)',
        concurrency: 1,
        'API p50': cold.p50,
        'API p99': cold.p99,
        'x faster than ls-remote (p50)': round(ls.p50 / cold.p50, 1),
      },
      { probe: 'git ls-remote (gh: probe, baseline)', concurrency: 1, 'API p50': ls.p50, 'API p99': ls.p99 },
    );
    const x304 = rows.find((r) => r.probe === 'GET If-None-Match -> 304');
    const xHead = rows.find((r) => r.probe === 'HEAD');
    const x304Uncached = rows.find((r) => r.probe === 'GET If-None-Match -> 304 (read cache off)');
    writeResult('probe', rows, {
      indexedSkills: await indexedSkills(url),
      latencyUnit: 'ms',
      targets: {
        '>= 50% of the floor req/s (304)': {
          value: x304?.['x floor'],
          met: Number(x304?.['x floor']) >= 0.5,
        },
        '>= 50% of the floor req/s (HEAD)': {
          value: xHead?.['x floor'],
          met: Number(xHead?.['x floor']) >= 0.5,
        },
        '>= 50% of the floor req/s (304, read cache off)': {
          value: x304Uncached?.['x floor'],
          met: Number(x304Uncached?.['x floor']) >= 0.5,
        },
        '20x faster than git ls-remote (keep-alive probe)': {
          value: round(ls.p50 / warm.p50, 1),
          met: ls.p50 / warm.p50 >= 20,
        },
      },
    });
  } finally {
    await Promise.all([
      api.stop(),
      uncachedApi.stop(),
      againstApi?.stop(),
      againstUncached?.stop(),
      floor.stop(),
      standin.close(),
    ]);
  }
}
