/**
 * `npm run bench -- cold-resolve [--samples 8]`: `atskills get` of a skill never fetched before (empty
 * cache), through the hub's archive (`gh:` via the hub mirror, ATSKILLS_GH_VIA_HUB=1) against the
 * three-phase git fetch of the same skill from the stand-in's git server: wall time of the client process
 * and bytes on the wire (a counting proxy before the hub; the git server's request log).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startGithubStandin } from '../../test/support/github-standin.js';
import { requireBuiltCli, runAtskills } from '../lib/cli.js';
import { startCountingProxy } from '../lib/counting-proxy.js';
import { corpusDir, requireIndexedDatabase } from '../lib/env.js';
import { pickSkills } from '../lib/identities.js';
import { type BenchRow, writeResult } from '../lib/report.js';
import { startApi } from '../lib/servers.js';
import { median, round } from '../lib/stats.js';

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { samples: { type: 'string', default: '8' } } });
  requireBuiltCli();
  const url = await requireIndexedDatabase();
  const skills = await pickSkills(url, Number(values.samples), 'cold');
  const api = await startApi(url);
  const proxy = await startCountingProxy(api.url);
  const standin = await startGithubStandin({ reposRoot: path.join(corpusDir, 'repos') });
  const work = mkdtempSync(path.join(tmpdir(), 'atskills-bench-cold-'));
  const samples: { route: string; identity: string; ms: number; bytes: number; code: number }[] = [];
  try {
    for (const [i, s] of skills.entries()) {
      for (const route of ['hub archive', 'git (three-phase fetch)'] as const) {
        const cache = path.join(work, `cache-${i}-${route === 'hub archive' ? 'hub' : 'git'}`);
        const env: Record<string, string> = {
          ATSKILLS_CACHE: cache,
          ATSKILLS_HUB: proxy.url,
          ATSKILLS_GIT_BASE: standin.gitUrl,
          ...(route === 'hub archive' ? { ATSKILLS_GH_VIA_HUB: '1' } : {}),
        };
        proxy.reset();
        standin.git.resetLog();
        const r = await runAtskills(['get', '--json', s.identity], work, env);
        if (r.code !== 0)
          throw new Error(`atskills get ${s.identity} (${route}) failed (${r.code}): ${r.stdout}${r.stderr}`);
        const bytes =
          route === 'hub archive'
            ? proxy.bytes().down + proxy.bytes().up
            : standin.git.log.reduce((sum, e) => sum + e.bytesIn + e.bytesOut, 0);
        samples.push({ route, identity: s.identity, ms: r.ms, bytes, code: r.code });
        rmSync(cache, { recursive: true, force: true });
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
    await Promise.all([api.stop(), proxy.close(), standin.close()]);
  }
  const of = (route: string) => samples.filter((x) => x.route === route);
  const hub = of('hub archive');
  const git = of('git (three-phase fetch)');
  const rows: BenchRow[] = [hub, git].map((list) => ({
    route: list[0]!.route,
    samples: list.length,
    'median ms': round(median(list.map((x) => x.ms)), 1),
    'median KiB on the wire': round(median(list.map((x) => x.bytes)) / 1024, 1),
  }));
  rows[0]!['x faster than git'] = round(Number(rows[1]!['median ms']) / Number(rows[0]!['median ms']), 2);
  rows[0]!['x fewer bytes than git'] = round(
    Number(rows[1]!['median KiB on the wire']) / Number(rows[0]!['median KiB on the wire']),
    2,
  );
  writeResult('cold-resolve', rows, {
    samples,
    note: 'times include starting the client process (node); both routes pay it equally',
  });
}
