/**
 * `npm run bench -- client [--samples 15]`: `atskills get` end to end (a child process) on a warm cache
 * with an unchanged upstream - one revision probe, then the cached SKILL.md - against `cat` of the same
 * file (the floor: a process that only reads it), and against the same command with the hub down (the
 * stale path: the probe fails, the cache answers). Also the `gh:` route probing with git ls-remote.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startGithubStandin } from '../../test/support/github-standin.js';
import { requireBuiltCli, runAtskills, timeCommand } from '../lib/cli.js';
import { corpusDir, freePort, requireIndexedDatabase } from '../lib/env.js';
import { pickSkills } from '../lib/identities.js';
import { type BenchRow, writeResult } from '../lib/report.js';
import { startApi } from '../lib/servers.js';
import { latencySummary, round } from '../lib/stats.js';

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { samples: { type: 'string', default: '15' } } });
  const samples = Number(values.samples);
  requireBuiltCli();
  const url = await requireIndexedDatabase();
  const [skill] = await pickSkills(url, 1, 'client');
  if (!skill) throw new Error('no skill to resolve');
  const api = await startApi(url);
  const standin = await startGithubStandin({ reposRoot: path.join(corpusDir, 'repos') });
  const work = mkdtempSync(path.join(tmpdir(), 'atskills-bench-client-'));
  const downHub = `http://127.0.0.1:${await freePort()}`; // nothing listens there: connection refused
  const times: Record<string, number[]> = {};
  const statuses: Record<string, string> = {};
  const time = async (label: string, env: Record<string, string>) => {
    times[label] = [];
    for (let i = 0; i < samples + 1; i++) {
      const r = await runAtskills(['get', '--json', skill.identity], work, env);
      if (r.code !== 0) throw new Error(`${label}: atskills get failed (${r.code}): ${r.stdout}${r.stderr}`);
      const answer = JSON.parse(r.stdout) as { stale?: boolean; dir?: string };
      statuses[label] = answer.stale ? 'stale' : 'fresh';
      if (i > 0) times[label]!.push(r.ms);
    }
  };
  let skillFile = '';
  try {
    const viaHub = {
      ATSKILLS_CACHE: path.join(work, 'cache-hub'),
      ATSKILLS_HUB: api.url,
      ATSKILLS_GH_VIA_HUB: '1',
    };
    const viaGit = {
      ATSKILLS_CACHE: path.join(work, 'cache-git'),
      ATSKILLS_GIT_BASE: standin.gitUrl,
      ATSKILLS_HUB: downHub,
    };
    // Warm both caches once.
    for (const env of [viaHub, viaGit]) {
      const r = await runAtskills(['get', '--json', skill.identity], work, env);
      if (r.code !== 0) throw new Error(`warming the cache failed (${r.code}): ${r.stdout}${r.stderr}`);
      skillFile = path.join((JSON.parse(r.stdout) as { dir: string }).dir, 'SKILL.md');
    }
    console.error('warm cache, hub probe (304)...');
    await time('atskills get, warm, hub probe 304', viaHub);
    console.error('warm cache, hub down...');
    await time('atskills get, warm, hub down (stale)', { ...viaHub, ATSKILLS_HUB: downHub });
    console.error('warm cache, git ls-remote probe...');
    await time('atskills get, warm, gh: ls-remote probe', viaGit);
    times['cat SKILL.md (floor)'] = [];
    for (let i = 0; i < samples + 1; i++) {
      const ms = await timeCommand('cat', [skillFile]);
      if (i > 0) times['cat SKILL.md (floor)']!.push(ms);
    }
    statuses['cat SKILL.md (floor)'] = '';
  } finally {
    rmSync(work, { recursive: true, force: true });
    await Promise.all([api.stop(), standin.close()]);
  }
  const floor = latencySummary(times['cat SKILL.md (floor)']!).p50;
  const warm = latencySummary(times['atskills get, warm, hub probe 304']!).p50;
  const rows: BenchRow[] = Object.entries(times).map(([label, ms]) => {
    const s = latencySummary(ms);
    return {
      run: label,
      answer: statuses[label] ?? '',
      'p50 ms': round(s.p50, 1),
      'p95 ms': round(s.p95, 1),
      'x cat': round(s.p50 / floor, 1),
      'x warm hub probe': round(s.p50 / warm, 2),
    };
  });
  writeResult('client', rows, {
    identity: skill.identity,
    samples,
    note: 'each run is a new process; node start-up is most of it',
  });
}
