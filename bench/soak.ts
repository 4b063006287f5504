/**
 * `npm run soak [-- --seconds 60 --connections 64 --heap-mib 256]`: a bounded soak of the hub (issue 8, "Load").
 *
 * Indexes the shared corpus (../shared/corpus) through the real crawler into its own database, starts the
 * hub API as a child process on 127.0.0.1, and drives it from this process with autocannon: a mixed load of
 * searches, HEAD revision probes, If-None-Match revalidations (304) and archive downloads. Meanwhile it
 * samples the API process's resident memory once a second. It records the status counts (the soak fails on
 * any 5xx, error or timeout), latency percentiles (p99), and whether memory grew between the first and the
 * last third of the run; writes bench/results/soak.json and prints a table. Only 127.0.0.1 is ever targeted.
 */
import { Agent, request } from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { createCrawler, settingsWith } from '@atskills/crawler';
import { connectPostgres } from '@atskills/db';
import pg from 'pg';
import { buildCorpusRepos, corpusReposDir, listCorpusRepos } from '../test/support/corpus.js';
import { startGithubStandin } from '../test/support/github-standin.js';
import { ensureDatabase, indexedSkills, processMemory } from './lib/env.js';
import { writeResult } from './lib/report.js';
import { startApi } from './lib/servers.js';
import { latencySummary, round } from './lib/stats.js';

/** The part of autocannon's result this script reads (the package ships no types). */
interface AutocannonResult {
  requests: { total: number; average: number };
  latency: { p50: number; p90: number; p99: number; max: number; average: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  '5xx': number;
  statusCodeStats: Record<string, { count: number }>;
  duration: number;
}
interface AutocannonRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
}
type Autocannon = (options: {
  url: string;
  connections: number;
  duration: number;
  requests: AutocannonRequest[];
  timeout: number;
}) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    connections: { type: 'string', default: '64' },
    /**
     * V8 old-space limit of the API process (MiB; 0 = Node's default). Without a cap V8 grows its heap lazily
     * toward the default limit and RSS climbs for minutes with no leak; under a cap a leak shows as a growth
     * trend or a crash, which the soak reports.
     */
    'heap-mib': { type: 'string', default: '256' },
    /** Crawl the corpus again even when the soak database already holds its index. */
    reindex: { type: 'boolean', default: false },
  },
});
const seconds = Number(args.seconds);
const connections = Number(args.connections);
if (!Number.isInteger(seconds) || seconds < 3 || seconds > 3600) throw new Error('--seconds must be 3..3600');
if (!Number.isInteger(connections) || connections < 1 || connections > 1024) {
  throw new Error('--connections must be 1..1024');
}

const SOAK_DATABASE = 'atskills_soak';

/** Crawls every shared-corpus repository through the GitHub stand-in; returns the number of skills indexed. */
async function indexCorpus(url: string): Promise<{ repositories: number; skills: number; seconds: number }> {
  const started = performance.now();
  const reposRoot = await buildCorpusRepos();
  const standin = await startGithubStandin({ reposRoot, corpusDir: corpusReposDir });
  const handle = connectPostgres({ url, max: 5 });
  const names = await listCorpusRepos();
  const crawler = createCrawler({
    db: handle.db,
    settings: settingsWith({
      GITHUB_API_URL: standin.apiUrl,
      GIT_BASE_URL: standin.gitUrl,
      LOG_LEVEL: 'warn',
    }),
  });
  try {
    const runId = await crawler.startRun({ kind: 'repos', source: { kind: 'repos', repos: names } });
    const done = await crawler.waitForRun(runId, { pollMs: 200 });
    if (done.status !== 'finished') throw new Error(`corpus crawl ended ${done.status}`);
    return {
      repositories: names.length,
      skills: done.skillsFound,
      seconds: round((performance.now() - started) / 1000, 1),
    };
  } finally {
    await crawler.close();
    await handle.close();
    await standin.close();
  }
}

/** The request mix over sampled skills: searches, 304 revalidations and archives; HEAD probes apart. */
async function requestMix(
  url: string,
): Promise<{ requests: AutocannonRequest[]; probes: string[]; skills: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const { rows } = await client
    .query<{ identity: string; revision: string; name: string }>(
      `select identity, revision, name from skills
       where gone_at is null and parse_error is null and visibility = 'public'
       order by identity limit 120`,
    )
    .finally(() => client.end());
  if (rows.length === 0) throw new Error('the soak index is empty');
  const requests: AutocannonRequest[] = [];
  const probes: string[] = [];
  const words = ['pdf', 'test', 'review', 'deploy', 'docs', 'git', 'data', 'design', 'api', 'security'];
  rows.forEach((row, i) => {
    const id = row.identity.split('/').map(encodeURIComponent).join('/');
    const word = words[i % words.length] as string;
    requests.push(
      { method: 'GET', path: `/search?q=${encodeURIComponent(row.name.split('-')[0] || word)}&limit=20` },
      { method: 'GET', path: `/v1/skills/${id}`, headers: { 'if-none-match': `"${row.revision}"` } },
      { method: 'GET', path: `/search?q=${word}` },
      { method: 'GET', path: `/v1/archive/${id}` },
    );
    probes.push(`/v1/skills/${id}`);
  });
  return { requests, probes, skills: rows.length };
}

/**
 * HEAD revision probes in a closed loop over node:http. Not through autocannon: its response parser waits
 * for a body after a HEAD answer that carries Content-Length, so each connection would stall on its first
 * probe.
 */
async function probeLoop(baseUrl: string, paths: string[], workers: number, untilMs: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: workers });
  const base = new URL(baseUrl);
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  let next = 0;
  const one = (path: string) =>
    new Promise<number>((resolve, reject) => {
      const req = request(
        { agent, host: base.hostname, port: base.port, method: 'HEAD', path, timeout: 10_000 },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', reject);
      req.end();
    });
  const worker = async () => {
    while (performance.now() < untilMs) {
      const started = performance.now();
      try {
        const status = await one(paths[next++ % paths.length] as string);
        statuses[status] = (statuses[status] ?? 0) + 1;
        latencies.push(performance.now() - started);
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  agent.destroy();
  return { latencies, statuses, errors };
}

/** Mean of the values. */
function mean(values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
}

/** Least-squares slope of y over x (MiB per minute when x is in minutes). */
function slope(points: { x: number; y: number }[]): number {
  const mx = mean(points.map((p) => p.x));
  const my = mean(points.map((p) => p.y));
  const num = points.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0);
  const den = points.reduce((a, p) => a + (p.x - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

console.log(`soak: ${seconds} s at ${connections} connections against 127.0.0.1`);
const url = await ensureDatabase(SOAK_DATABASE, args.reindex);
const already = await indexedSkills(url);
const indexed =
  already > 0 && !args.reindex
    ? { reused: true, skills: already }
    : { reused: false, ...(await indexCorpus(url)) };
console.log(
  indexed.reused
    ? `reusing the soak index: ${indexed.skills} skills (--reindex to crawl again)`
    : `indexed ${indexed.skills} skills of the shared corpus through the crawler`,
);
const mix = await requestMix(url);
const heapMiB = Number(args['heap-mib']);
if (!Number.isInteger(heapMiB) || heapMiB < 0) throw new Error('--heap-mib must be a whole number of MiB');
const api = await startApi(url, heapMiB > 0 ? { NODE_OPTIONS: `--max-old-space-size=${heapMiB}` } : {});
try {
  // Warm-up (JIT, pools, caches) so the first third of memory samples is not the start-up climb.
  const warmupSeconds = Math.min(15, Math.max(3, Math.round(seconds / 4)));
  await autocannon({
    url: api.url,
    connections,
    duration: warmupSeconds,
    requests: mix.requests,
    timeout: 10,
  });
  const loadBefore = os.loadavg().map((n) => round(n, 2));

  const samples: { t: number; rssMiB: number }[] = [];
  const started = performance.now();
  const sampler = setInterval(() => {
    samples.push({ t: (performance.now() - started) / 1000, rssMiB: processMemory(api.pid).rssMiB });
  }, 1_000);
  // One connection in eight probes with HEAD; the others run the autocannon mix.
  const probeWorkers = Math.max(1, Math.floor(connections / 8));
  const [result, probes] = await Promise.all([
    autocannon({
      url: api.url,
      connections: Math.max(1, connections - probeWorkers),
      duration: seconds,
      requests: mix.requests,
      timeout: 10,
    }),
    probeLoop(api.url, mix.probes, probeWorkers, started + seconds * 1000),
  ]);
  clearInterval(sampler);
  const peakMiB = processMemory(api.pid).peakMiB;

  const third = Math.max(1, Math.floor(samples.length / 3));
  const firstThird = round(mean(samples.slice(0, third).map((s) => s.rssMiB)), 1);
  const lastThird = round(mean(samples.slice(-third).map((s) => s.rssMiB)), 1);
  const slopePerMinute = round(slope(samples.map((s) => ({ x: s.t / 60, y: s.rssMiB }))), 2);
  // Growth means the last third sits clearly above the first (10% and 16 MiB: GC sawtooth is not a trend).
  const memoryGrowth = lastThird > firstThird * 1.1 && lastThird - firstThird > 16;
  const mixStatuses = Object.fromEntries(
    Object.entries(result.statusCodeStats).map(([code, s]) => [code, s.count]),
  );
  const count5xx = (statuses: Record<string, number>) =>
    Object.entries(statuses)
      .filter(([code]) => code.startsWith('5'))
      .reduce((a, [, n]) => a + n, 0);
  const probeSummary = latencySummary(probes.latencies);
  const fiveXx = count5xx(mixStatuses) + count5xx(probes.statuses);
  const failures = result.errors + result.timeouts + probes.errors;
  const passed = fiveXx === 0 && failures === 0 && !memoryGrowth;

  const memory = {
    'rss first third MiB': firstThird,
    'rss last third MiB': lastThird,
    'rss slope MiB/min': slopePerMinute,
    'peak rss MiB': peakMiB,
  };
  writeResult(
    'soak',
    [
      {
        load: 'mix (autocannon)',
        connections: Math.max(1, connections - probeWorkers),
        requests: result.requests.total,
        'req/s': round(result.requests.average, 1),
        'p50 ms': result.latency.p50,
        'p99 ms': result.latency.p99,
        'max ms': result.latency.max,
        '5xx': count5xx(mixStatuses),
        'errors+timeouts': result.errors + result.timeouts,
      },
      {
        load: 'HEAD probes',
        connections: probeWorkers,
        requests: probeSummary.count,
        'req/s': round(probeSummary.count / seconds, 1),
        'p50 ms': probeSummary.p50,
        'p99 ms': probeSummary.p99,
        'max ms': probeSummary.max,
        '5xx': count5xx(probes.statuses),
        'errors+timeouts': probes.errors,
      },
    ],
    {
      seconds,
      connections,
      warmupSeconds,
      apiHeapLimitMiB: heapMiB || 'node default',
      target: '127.0.0.1 (hub API child process; load from the soak process)',
      // 1/5/15-minute load averages: the machine is shared, so figures are only comparable at similar load.
      loadAverage: { before: loadBefore, after: os.loadavg().map((n) => round(n, 2)) },
      index: indexed,
      mix: {
        skillsSampled: mix.skills,
        perSkill: [
          'GET /search (name word)',
          'GET /v1/skills + If-None-Match (304)',
          'GET /search (common word)',
          'GET /v1/archive',
          'HEAD /v1/skills (probe loop)',
        ],
      },
      statuses: { mix: mixStatuses, probes: probes.statuses },
      memory: { ...memory, growth: memoryGrowth, samplesMiB: samples.map((s) => s.rssMiB) },
      passed,
    },
  );
  console.log(
    `memory: first third ${firstThird} MiB, last third ${lastThird} MiB, slope ${slopePerMinute} MiB/min, peak ${peakMiB} MiB -> ${memoryGrowth ? 'GROWTH' : 'no growth trend'}`,
  );
  if (!passed) {
    console.error(
      'soak FAILED: 5xx, errors, timeouts or a memory growth trend (see bench/results/soak.json)',
    );
    process.exitCode = 1;
  } else {
    console.log('soak passed: zero 5xx, no errors or timeouts, no memory growth trend');
  }
} finally {
  await api.stop();
}
