/**
 * `npm run bench -- probe [--total 5000] [--samples 40]`: the validating cache's revision probe on
 * /v1/skills/<identity>: HEAD and GET with If-None-Match (answered 304) at concurrency 64 against the same
 * requests to the bare-Fastify floor; then one probe at a time against `git ls-remote` of the same skill's
 * repository on the stand-in's git server (what a `gh:` probe costs the client).
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
import { latencySummary, round } from '../lib/stats.js';

const execFileAsync = promisify(execFile);
const FLOOR_ETAG = '"floor-revision"';

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      total: { type: 'string', default: '5000' },
      samples: { type: 'string', default: '40' },
      concurrency: { type: 'string', default: '64' },
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
    ];
    // One unmeasured pass of the whole mix per server first: JIT, connection pools and the read cache
    // settle before any measured pass, so the first measured row is not also the warm-up.
    for (const server of [api, uncachedApi, floor]) {
      for (const [, apiRequests, floorRequests] of pairs) {
        const requests = server === floor ? floorRequests : apiRequests;
        await runLoad({ baseUrl: server.url, requests, concurrency, total: Math.min(total, 2000) });
      }
    }
    for (const { suffix, server } of variants)
      for (const [label, apiRequests, floorRequests] of pairs) {
        console.error(`${label}${suffix} at concurrency ${concurrency}...`);
        const a = await runLoad({ baseUrl: server.url, requests: apiRequests, concurrency, total });
        const f = await runLoad({ baseUrl: floor.url, requests: floorRequests, concurrency, total });
        const expected = label === 'HEAD' ? '200' : '304';
        rows.push({
          probe: `${label}${suffix}`,
          concurrency,
          'API req/s': a.requestsPerSecond,
          'floor req/s': f.requestsPerSecond,
          'x floor': round(a.requestsPerSecond / f.requestsPerSecond, 2),
          'API p50': a.p50,
          'API p99': a.p99,
          'floor p50': f.p50,
          [`API answers ${expected}`]: `${a.statuses[expected] ?? 0}/${a.count}`,
        });
      }

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
    await Promise.all([api.stop(), uncachedApi.stop(), floor.stop(), standin.close()]);
  }
}
