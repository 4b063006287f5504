/**
 * `npm run bench -- client [--samples 25]`: the start-up of the installable client (the bundle that
 * `GET /cli/atskills.tgz` serves, built here from the current sources) against `node -e 0`, measured side by
 * side: every sample runs each command once, in turn, so machine load hits all of them alike. The target
 * is a warm `atskills get` of a cached skill (one 304 probe to a running hub, then the cached SKILL.md)
 * within 2x of `node -e 0`. Also: the same with the hub down (the stale path), a project skill, `--version`,
 * and `cat` of the SKILL.md (the floor of a process that only reads it).
 *
 * `--against <checkout>` adds the same `get` and `--version` runs of another checkout's bundle (say, a
 * worktree of the commit before a refactor) to every round, so "no slower than before" is measured in one run.
 *
 * Hooks (SPEC 2.5): `atskills hook session-start` and `hook user-prompt` as Codex / Claude Code run them (the
 * event JSON on stdin), with 1, 5 and 20 `.autotrigger` lines (and as many references in the message), on the
 * healthy hub and on one that accepts connections and never answers (the 1.5 s budget, then the cache).
 *
 * Self-contained: its own database (`atskills_bench_client`, migrated and seeded with one hub collection
 * each run) and the hub as a child process; no crawled benchmark index needed.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { connectPostgres } from '@atskills/db';
import { seedHubCollection, skillMd } from '../../apps/api/test/support/seed.js';
import { bundleClient } from '../../apps/cli/scripts/bundle.js';
import { ensureDatabase, freePort } from '../lib/env.js';
import { type BenchRow, writeResult } from '../lib/report.js';
import { startApi } from '../lib/servers.js';
import { latencySummary, round } from '../lib/stats.js';

const execFileAsync = promisify(execFile);
const IDENTITY = 'hub:bench/playbooks/deploy';
const TARGET = 2;

interface Case {
  label: string;
  file: string;
  args: string[];
  env?: Record<string, string>;
  /** Exit code the command must end with. */
  code?: number;
  /** What the command reads on stdin (a hook's event JSON). */
  stdin?: string;
  /** The working folder, when not the shared project. */
  cwd?: string;
}

/** The hook line counts measured. */
const HOOK_LINES = [1, 5, 20] as const;

// GNU time reports the child's CPU time (user + system, all its threads): on a machine shared with other
// work, wall time mostly measures the queue for a core, CPU time what the process itself costs.
const GNU_TIME = '/usr/bin/time';
const hasGnuTime = existsSync(GNU_TIME);

/** One run of a case: wall milliseconds, and CPU milliseconds when GNU time is there. */
async function timeOnce(c: Case, cwd: string): Promise<{ wall: number; cpu?: number }> {
  const started = performance.now();
  const cpuFile = path.join(cwd, '..', 'cpu.txt');
  const [file, args] = hasGnuTime
    ? [GNU_TIME, ['-f', '%U %S', '-o', cpuFile, c.file, ...c.args]]
    : [c.file, c.args];
  try {
    const child = execFileAsync(file, args, {
      cwd: c.cwd ?? cwd,
      env: { PATH: process.env.PATH ?? '', HOME: cwd, ...c.env },
      maxBuffer: 16 * 1024 * 1024,
    });
    child.child.stdin?.end(c.stdin ?? '');
    await child;
    if ((c.code ?? 0) !== 0) throw new Error(`${c.label}: exited 0, expected ${c.code}`);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code !== c.code) throw new Error(`${c.label} failed (${String(code)}): ${String(error)}`);
  }
  const wall = performance.now() - started;
  if (!hasGnuTime) return { wall };
  const [user = 0, system = 0] = (await readFile(cpuFile, 'utf8')).trim().split(/\s+/).map(Number);
  return { wall, cpu: (user + system) * 1000 };
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { samples: { type: 'string', default: '25' }, against: { type: 'string' } },
  });
  const samples = Number(values.samples);
  const work = await mkdtemp(path.join(tmpdir(), 'atskills-bench-client-'));
  const pack = path.join(work, 'pack');
  await bundleClient(pack);
  const bin = path.join(pack, 'bin', 'atskills.js');
  let againstBin: string | undefined;
  if (values.against) {
    // The other checkout's own bundler, so its bundle is built from its sources and its node_modules.
    const other = (await import(path.resolve(values.against, 'apps', 'cli', 'scripts', 'bundle.ts'))) as {
      bundleClient: typeof bundleClient;
    };
    await other.bundleClient(path.join(work, 'against'));
    againstBin = path.join(work, 'against', 'bin', 'atskills.js');
  }
  const url = await ensureDatabase('atskills_bench_client', true);
  const handle = connectPostgres({ url, max: 2 });
  try {
    const resident: Record<string, string> = {};
    for (let i = 1; i <= 20; i++)
      resident[`s${i}/SKILL.md`] = skillMd(`s${i}`, `Resident skill ${i}.`, `# S${i}\n\nStep ${i}.\n`);
    await seedHubCollection(handle.db, 'bench', 'playbooks', {
      'deploy/SKILL.md': skillMd('deploy', 'Deploy the service step by step.', '# Deploy\n\nShip it.\n'),
      'deploy/checklist.md': '# Checklist\n',
      ...resident,
    });
  } finally {
    await handle.close();
  }
  const api = await startApi(url);
  const project = path.join(work, 'project');
  await mkdir(path.join(project, '.atskills', 'runbook'), { recursive: true });
  await writeFile(
    path.join(project, '.atskills', 'runbook', 'SKILL.md'),
    skillMd('runbook', 'A project skill.', '# Runbook\n'),
  );
  const cache = path.join(work, 'cache');
  const hubEnv = { ATSKILLS_CACHE: cache, ATSKILLS_HUB: api.url, XDG_CONFIG_HOME: path.join(work, 'config') };
  const downHub = `http://127.0.0.1:${await freePort()}`; // nothing listens there: connection refused
  // A hub that accepts connections and never answers: what a hook's budget is for.
  const held = new Set<Socket>();
  const hanging = createServer((socket) => {
    held.add(socket);
    socket.on('close', () => held.delete(socket));
  });
  await new Promise<void>((done) => hanging.listen(0, '127.0.0.1', done));
  const hangingHub = `http://127.0.0.1:${(hanging.address() as { port: number }).port}`;
  const hookCases: Case[] = [];
  for (const n of HOOK_LINES) {
    const dir = path.join(work, `hooks-${n}`);
    await mkdir(path.join(dir, '.atskills'), { recursive: true });
    const ids = Array.from({ length: n }, (_, i) => `hub:bench/playbooks/s${i + 1}`);
    await writeFile(path.join(dir, '.atskills', '.autotrigger'), ids.map((id) => `@${id}\n`).join(''));
    // Each hook: what its label counts, and the event JSON the host sends on stdin.
    const hooks = [
      [
        'session-start',
        `${n} lines`,
        JSON.stringify({ hook_event_name: 'SessionStart', cwd: dir, source: 'startup' }),
      ],
      [
        'user-prompt',
        `${n} refs`,
        JSON.stringify({
          hook_event_name: 'UserPromptSubmit',
          cwd: dir,
          prompt: `use ${ids.map((id) => `@skills:${id}`).join(' ')}`,
        }),
      ],
    ] as const;
    for (const [hub, label] of [
      [api.url, 'healthy hub'],
      [hangingHub, 'hanging hub'],
    ] as const) {
      const env = { ...hubEnv, ATSKILLS_HUB: hub };
      for (const [hook, counted, stdin] of hooks) {
        hookCases.push({
          label: `hook ${hook}, ${counted}, ${label}`,
          file: process.execPath,
          args: [bin, 'hook', hook, '--host', 'codex'],
          env,
          stdin,
          cwd: dir,
        });
      }
    }
  }
  const cases: Case[] = [
    { label: 'node -e 0 (baseline)', file: process.execPath, args: ['-e', '0'] },
    {
      label: 'atskills get, warm, hub probe 304',
      file: process.execPath,
      args: [bin, 'get', IDENTITY],
      env: hubEnv,
    },
    {
      label: 'atskills get, warm, hub down (stale)',
      file: process.execPath,
      args: [bin, 'get', IDENTITY],
      env: { ...hubEnv, ATSKILLS_HUB: downHub },
    },
    {
      label: 'atskills get, project skill',
      file: process.execPath,
      args: [bin, 'get', 'runbook'],
      env: hubEnv,
    },
    { label: 'atskills --version', file: process.execPath, args: [bin, '--version'], env: hubEnv },
    ...(againstBin
      ? [
          {
            label: 'against: atskills get, warm, hub probe 304',
            file: process.execPath,
            args: [againstBin, 'get', IDENTITY],
            env: hubEnv,
          },
          {
            label: 'against: atskills --version',
            file: process.execPath,
            args: [againstBin, '--version'],
            env: hubEnv,
          },
        ]
      : []),
    ...hookCases,
    { label: 'cat SKILL.md (floor)', file: 'cat', args: [] },
  ];
  const times = new Map<string, number[]>(cases.map((c) => [c.label, []]));
  const cpuTimes = new Map<string, number[]>(cases.map((c) => [c.label, []]));
  try {
    // Warm the cache, and learn where the cached SKILL.md is for the floor.
    const { stdout } = await execFileAsync(process.execPath, [bin, 'get', '--json', IDENTITY], {
      cwd: project,
      env: { PATH: process.env.PATH ?? '', HOME: work, ...hubEnv },
    });
    const dir = (JSON.parse(stdout) as { dir: string }).dir;
    cases[cases.length - 1]!.args = [path.join(dir, 'SKILL.md')];
    // Every hook case's skills cached once through the healthy hub (the hanging runs serve them stale).
    for (const c of hookCases.filter((h) => h.env?.ATSKILLS_HUB === api.url)) await timeOnce(c, project);
    for (let i = 0; i < samples + 2; i++) {
      for (const c of cases) {
        const ms = await timeOnce(c, project);
        if (i < 2) continue; // two warm-up rounds (page cache, compile cache)
        times.get(c.label)!.push(ms.wall);
        if (ms.cpu !== undefined) cpuTimes.get(c.label)!.push(ms.cpu);
      }
    }
  } finally {
    for (const socket of held) socket.destroy();
    hanging.close();
    await api.stop();
    await rm(work, { recursive: true, force: true });
  }
  const p50 = (m: Map<string, number[]>, label: string) => latencySummary(m.get(label)!).p50;
  const baseline = p50(times, cases[0]!.label);
  const cpuBaseline = hasGnuTime ? p50(cpuTimes, cases[0]!.label) : 0;
  const rows: BenchRow[] = cases.map((c) => {
    const s = latencySummary(times.get(c.label)!);
    return {
      run: c.label,
      'p50 ms': round(s.p50, 1),
      'p95 ms': round(s.p95, 1),
      'x node -e 0': round(s.p50 / baseline, 2),
      ...(hasGnuTime
        ? {
            'cpu p50 ms': round(p50(cpuTimes, c.label), 1),
            'cpu x node -e 0': round(p50(cpuTimes, c.label) / cpuBaseline, 2),
          }
        : {}),
    };
  });
  const warm = p50(times, cases[1]!.label) / baseline;
  const against = againstBin
    ? {
        checkout: values.against,
        commit: (
          await execFileAsync('git', ['-C', values.against as string, 'rev-parse', 'HEAD']).catch(() => ({
            stdout: 'unknown',
          }))
        ).stdout.trim(),
        warmGetVsAgainst: round(
          p50(times, cases[1]!.label) / p50(times, 'against: atskills get, warm, hub probe 304'),
          2,
        ),
        ...(hasGnuTime
          ? {
              warmGetCpuVsAgainst: round(
                p50(cpuTimes, cases[1]!.label) / p50(cpuTimes, 'against: atskills get, warm, hub probe 304'),
                2,
              ),
            }
          : {}),
      }
    : undefined;
  const warmCpu = hasGnuTime ? p50(cpuTimes, cases[1]!.label) / cpuBaseline : undefined;
  writeResult('client', rows, {
    identity: IDENTITY,
    samples,
    target: `warm get <= ${TARGET}x node -e 0`,
    warmGetRatio: round(warm, 2),
    ...(warmCpu !== undefined ? { warmGetCpuRatio: round(warmCpu, 2) } : {}),
    met: warm <= TARGET,
    ...(against ? { against } : {}),
    loadAverage: os.loadavg().map((l) => round(l, 1)),
    note: 'each run is a new process, the commands interleaved per sample; the client is the bundle GET /cli/atskills.tgz serves; cpu = user + system of all threads from GNU time (10 ms resolution)',
  });
}
