/**
 * `npm run bench -- resolve-batch [--rounds 30]`: a session's revalidation of 128 skills as one
 * POST /v1/resolve against 128 single conditional GETs (one at a time, and 8 at a time as a parallel
 * client would), all unchanged; and the same batch when every skill changed (no revision held). Every
 * request goes through the same keep-alive node:http client (bench/lib/load.ts), after the same warm-up
 * (one pass of probes fills the read cache for both sides, as a running hub's would be), and both sides get
 * unmeasured warm-up requests so neither is measured before the JIT settled.
 */
import { parseArgs } from 'node:util';
import { requireIndexedDatabase } from '../lib/env.js';
import { pickSkills, skillPath } from '../lib/identities.js';
import { runLoad } from '../lib/load.js';
import { type BenchRow, writeResult } from '../lib/report.js';
import { startApi } from '../lib/servers.js';
import { latencySummary, round } from '../lib/stats.js';

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { rounds: { type: 'string', default: '30' } } });
  const rounds = Number(values.rounds);
  const url = await requireIndexedDatabase();
  const skills = await pickSkills(url, 128, 'resolve');
  // Postgres for search: this benchmark resolves, and an index build would compete for the cores.
  const api = await startApi(url, { SEARCH_ENGINE: 'postgres' });
  const rows: BenchRow[] = [];
  try {
    const batch = async (withRevision: boolean) => {
      const body = JSON.stringify({
        items: skills.map((s) =>
          withRevision ? { identity: s.identity, revision: s.revision } : { identity: s.identity },
        ),
      });
      const r = await runLoad({
        baseUrl: api.url,
        requests: [{ method: 'POST', path: '/v1/resolve', body }],
        concurrency: 1,
        total: rounds,
        // As many warm-up batches as the probe side's two unmeasured rounds have requests' worth of JIT
        // (256 probes): two batches leave the route's code unoptimised and measure the compiler.
        warmup: 64,
      });
      // One more, to report what the answers were.
      const res = await fetch(`${api.url}/v1/resolve`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      const answer = (await res.json()) as { items?: { status: string }[] };
      const counts: Record<string, number> = {};
      for (const item of answer.items ?? []) counts[item.status] = (counts[item.status] ?? 0) + 1;
      return { p50: r.p50, p95: r.p95, statuses: `${res.status} ${JSON.stringify(counts)}` };
    };
    const singles = async (concurrency: number) => {
      const times: number[] = [];
      const requests = skills.map((s) => ({
        path: skillPath(s.identity),
        headers: { 'if-none-match': `"${s.revision}"` },
      }));
      let statuses = '';
      for (let i = 0; i < rounds + 2; i++) {
        const started = performance.now();
        const r = await runLoad({
          baseUrl: api.url,
          requests,
          concurrency,
          total: requests.length,
          warmup: 0,
        });
        if (i >= 2) times.push(performance.now() - started);
        statuses = JSON.stringify(r.statuses);
      }
      return { ...latencySummary(times), statuses };
    };
    // Both sides start from a hub that has served these skills once (revisions cached).
    await runLoad({
      baseUrl: api.url,
      requests: skills.map((s) => ({
        path: skillPath(s.identity),
        headers: { 'if-none-match': `"${s.revision}"` },
      })),
      concurrency: 1,
      total: skills.length,
      warmup: 0,
    });
    console.error('batch of 128 (unchanged)...');
    const unchanged = await batch(true);
    console.error('batch of 128 (all changed)...');
    const changed = await batch(false);
    console.error('128 single probes, one at a time...');
    const serial = await singles(1);
    console.error('128 single probes, 8 at a time...');
    const parallel = await singles(8);
    const row = (
      label: string,
      r: { p50: number; p95: number; statuses: string },
      baseline = serial.p50,
    ) => ({
      revalidation: label,
      'p50 ms': r.p50,
      'p95 ms': r.p95,
      'x faster than 128 serial probes': round(baseline / r.p50, 1),
      answers: r.statuses,
    });
    rows.push(
      row('POST /v1/resolve, 128 unchanged', unchanged),
      row('POST /v1/resolve, 128 changed', changed),
      row('128 conditional GETs, 1 at a time (baseline)', serial),
      row('128 conditional GETs, 8 at a time', parallel),
    );
    writeResult('resolve-batch', rows, { rounds, identities: skills.length });
  } finally {
    await api.stop();
  }
}
