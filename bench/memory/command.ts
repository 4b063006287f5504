/**
 * `npm run bench -- memory [--total 3000]`: resident memory of the hub API (child process) over the full
 * index: with the in-memory search engine once its index is built (and how long the build took), idle
 * after a warm-up, and peak under the search load at concurrency 16; the same API on the Postgres engine
 * (no index in the process); beside the bare-Fastify floor measured the same way (what Node and Fastify
 * cost with no hub at all).
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { type ChildServer, processMemory, requireIndexedDatabase } from '../lib/env.js';
import { runLoad } from '../lib/load.js';
import { type BenchRow, writeResult } from '../lib/report.js';
import { startApi, startFloor, waitForIndex } from '../lib/servers.js';
import { round } from '../lib/stats.js';
import { buildQueries, searchPath } from '../search/queries.js';

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** RSS after start, idle after warm-up, and the peak while `load` runs (sampled every 100 ms). */
async function profile(server: ChildServer, load: () => Promise<unknown>) {
  await settle(2_000);
  const started = processMemory(server.pid).rssMiB;
  let peak = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, processMemory(server.pid).rssMiB);
  }, 100);
  await load();
  clearInterval(timer);
  await settle(3_000);
  const idle = processMemory(server.pid).rssMiB;
  return { started, peak, idle };
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { total: { type: 'string', default: '3000' } } });
  const total = Number(values.total);
  const url = await requireIndexedDatabase();
  const queries = await buildQueries(url);
  const requests = queries.map((q) => ({ path: searchPath(q.q) }));
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const size = await client.query(
    `select pg_database_size(current_database()) as db,
            pg_total_relation_size('skills') as skills,
            (select count(*) from skills where gone_at is null and parse_error is null)::int as n`,
  );
  await client.end();
  const rows: BenchRow[] = [];
  const index: Record<string, unknown> = {};
  const measure = async (label: string, server: ChildServer, memoryEngine = false) => {
    try {
      if (memoryEngine) {
        const started = performance.now();
        index.buildSeconds = round(await waitForIndex(server.url), 1);
        index.readyAfterSeconds = round((performance.now() - started) / 1000, 1);
        index.peakRssDuringBuildMiB = processMemory(server.pid).peakMiB;
        const text = await (await fetch(`${server.url}/metrics`)).text();
        const metric = (name: string) => Number(text.match(new RegExp(`^${name} ([\\d.e+-]+)$`, 'm'))?.[1]);
        index.documents = metric('atskills_search_index_documents');
        index.estimatedMiB = round(metric('atskills_search_index_bytes') / 2 ** 20, 1);
      }
      let mean = 0;
      const p = await profile(server, async () => {
        const r = await runLoad({ baseUrl: server.url, requests, concurrency: 16, total });
        mean = r.requestsPerSecond;
      });
      rows.push({
        process: label,
        'RSS after start (MiB)': p.started,
        'peak RSS under search load c=16 (MiB)': p.peak,
        'RSS idle after load (MiB)': p.idle,
        'req/s during load': mean,
      });
    } finally {
      await server.stop();
    }
  };
  // The read cache off: every search reaches the engine, as the search benchmark measures it.
  console.error('API, in-memory engine (building its index)...');
  await measure(
    'hub API (memory engine, index loaded)',
    await startApi(url, { SEARCH_ENGINE: 'memory', READ_CACHE_MB: '0' }),
    true,
  );
  console.error('API, Postgres engine...');
  await measure(
    'hub API (postgres engine)',
    await startApi(url, { SEARCH_ENGINE: 'postgres', READ_CACHE_MB: '0' }),
  );
  console.error('floor...');
  await measure('bare Fastify floor (baseline)', await startFloor(10_000));
  const floor = rows[2]!;
  for (const api of rows.slice(0, 2)) {
    api['x floor (peak)'] = round(
      Number(api['peak RSS under search load c=16 (MiB)']) /
        Number(floor['peak RSS under search load c=16 (MiB)']),
      2,
    );
  }
  writeResult('memory', rows, {
    indexedSkills: size.rows[0].n,
    databaseMiB: round(Number(size.rows[0].db) / 2 ** 20, 1),
    skillsTableMiB: round(Number(size.rows[0].skills) / 2 ** 20, 1),
    index,
    note: 'the memory engine holds the search index in the API process (its RSS grows with the corpus); the postgres engine holds no per-skill state',
  });
}
