/**
 * `npm run bench -- memory [--total 3000]`: resident memory of the hub API (child process) over the full
 * index: right after start, idle after a warm-up, and peak under the search load at concurrency 16;
 * beside the bare-Fastify floor measured the same way (what Node and Fastify cost with no hub at all).
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { type ChildServer, processMemory, requireIndexedDatabase } from '../lib/env.js';
import { runLoad } from '../lib/load.js';
import { type BenchRow, writeResult } from '../lib/report.js';
import { startApi, startFloor } from '../lib/servers.js';
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
  const measure = async (label: string, server: ChildServer) => {
    try {
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
  console.error('API...');
  await measure('hub API (postgres engine)', await startApi(url));
  console.error('floor...');
  await measure('bare Fastify floor (baseline)', await startFloor(10_000));
  const api = rows[0]!;
  const floor = rows[1]!;
  api['x floor (peak)'] = round(
    Number(api['peak RSS under search load c=16 (MiB)']) /
      Number(floor['peak RSS under search load c=16 (MiB)']),
    2,
  );
  writeResult('memory', rows, {
    indexedSkills: size.rows[0].n,
    databaseMiB: round(Number(size.rows[0].db) / 2 ** 20, 1),
    skillsTableMiB: round(Number(size.rows[0].skills) / 2 ** 20, 1),
    note: 'the index lives in Postgres; the API process holds no per-skill state, so its memory does not grow with the corpus',
  });
}
