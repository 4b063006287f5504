/**
 * What every benchmark at corpus scale shares: the generated corpus (bench/work/corpus), a dedicated
 * database holding the crawled index (`atskills_bench` on the test Postgres server, kept between runs so
 * that search, probe and memory benchmarks reuse one crawl), and the hub API as a child process.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { connectPostgres, migrate } from '@atskills/db';
import pg from 'pg';
import type { GeneratedCorpus } from '../corpus/generate.js';

/** The repository root. */
export const repoRoot = path.resolve(import.meta.dirname, '..', '..');
/** Folder of the generated corpus (`npm run bench -- corpus`; BENCH_CORPUS overrides). */
export const corpusDir = process.env.BENCH_CORPUS
  ? path.resolve(process.env.BENCH_CORPUS)
  : path.join(repoRoot, 'bench', 'work', 'corpus');
/**
 * Node arguments that run a TypeScript entry from the sources. `node --import tsx` (not the tsx binary,
 * which starts a second node) so that the child's pid is the process whose memory is measured.
 */
export const tsNode = ['--import', 'tsx', '--conditions=@atskills/source'];

/** The Postgres server benchmarks use (DATABASE_URL's server, else the local one). */
export const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** Name of the database holding the benchmark index. */
export const benchDatabaseName = process.env.BENCH_DATABASE ?? 'atskills_bench';

/** `url` pointing at another database of the same server. */
export function databaseUrl(name: string): string {
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

/** The manifest of the generated corpus; a clear error when it was not generated yet. */
export function loadManifest(): GeneratedCorpus {
  const file = path.join(corpusDir, 'manifest.json');
  if (!existsSync(file)) {
    throw new Error(`no generated corpus at ${corpusDir}: run \`npm run bench -- corpus\` first`);
  }
  return JSON.parse(readFileSync(file, 'utf8')) as GeneratedCorpus;
}

/** Drops (when `fresh`) and creates the benchmark database, migrated; returns its URL. */
export function ensureBenchDatabase(fresh: boolean): Promise<string> {
  return ensureDatabase(benchDatabaseName, fresh);
}

/** Drops (when `fresh`) and creates database `name` on the benchmark server, migrated; returns its URL. */
export async function ensureDatabase(name: string, fresh: boolean): Promise<string> {
  await createDatabase(name, fresh);
  return migratedUrl(name);
}

/**
 * Drops (when `fresh`) and creates database `name` as a copy of database `template` (Postgres copies it
 * whole), unless it exists; its URL, and whether it was made now (its caller may add to a fresh copy).
 */
export async function copyDatabase(
  name: string,
  template: string,
  fresh: boolean,
): Promise<{ url: string; created: boolean }> {
  const created = await createDatabase(name, fresh, template);
  return { url: await migratedUrl(name), created };
}

/** Drops (when `fresh`) and creates database `name` (from `template` when given) unless it exists; whether it did. */
async function createDatabase(name: string, fresh: boolean, template?: string): Promise<boolean> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    if (fresh) await admin.query(`drop database if exists "${name}" with (force)`);
    const found = await admin.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount !== 0) return false;
    await admin.query(`create database "${name}"${template ? ` template "${template}"` : ''}`);
    return true;
  } finally {
    await admin.end();
  }
}

/** The URL of database `name`, its migrations applied. */
async function migratedUrl(name: string): Promise<string> {
  const url = databaseUrl(name);
  const handle = connectPostgres({ url, max: 2 });
  try {
    await migrate(handle);
  } finally {
    await handle.close();
  }
  return url;
}

/** The number of live, parsable skills in the benchmark database (0 when it was never crawled). */
export async function indexedSkills(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const r = await client.query(
      'select count(*)::int as n from skills where gone_at is null and parse_error is null',
    );
    return r.rows[0].n as number;
  } finally {
    await client.end();
  }
}

/** Fails with a clear message when the benchmark index is missing (the crawl benchmark builds it). */
export async function requireIndexedDatabase(): Promise<string> {
  const url = await ensureBenchDatabase(false);
  const n = await indexedSkills(url);
  if (n === 0) throw new Error('the benchmark index is empty: run `npm run bench -- crawl` first');
  await maintainLikeAutovacuum(url);
  return url;
}

/**
 * Does what autovacuum does after a crawl, when the server runs without it (this machine's Postgres has
 * `autovacuum = off`): statistics for the planner, and GIN pending lists merged into their indexes. Without
 * it every query scans megabytes of pending GIN entries and the planner misjudges how common a word is,
 * which doubles search latency; a production server does this on its own.
 */
async function maintainLikeAutovacuum(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ autovacuum: string }>('show autovacuum');
    if (rows[0]?.autovacuum === 'on') return;
    await client.query('vacuum (analyze) skills, skill_folders, repositories');
  } finally {
    await client.end();
  }
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

/** Resident and peak resident memory of a process in MiB, from /proc (Linux). */
export function processMemory(pid: number): { rssMiB: number; peakMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return { rssMiB: Math.round(kib('VmRSS') / 102.4) / 10, peakMiB: Math.round(kib('VmHWM') / 102.4) / 10 };
}

const roundTenth = (value: number) => Math.round(value * 10) / 10;

/** Resident memory of a process and its children (a cluster's primary and its workers), summed. */
export function treeMemory(pid: number): { rssMiB: number; peakMiB: number; processes: number } {
  const pids = [pid, ...childPids(pid)];
  const each = pids.map((p) => processMemory(p));
  return {
    rssMiB: roundTenth(each.reduce((sum, m) => sum + m.rssMiB, 0)),
    peakMiB: roundTenth(each.reduce((sum, m) => sum + m.peakMiB, 0)),
    processes: pids.length,
  };
}

/** The pids of a process's children (a cluster primary's workers). */
export function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** A server running as a child process. */
export interface ChildServer {
  url: string;
  pid: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Polls `url` until it answers (any status) or the child exits. */
async function waitForHttp(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode}):\n${log()}`);
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error(`server at ${url} did not start:\n${log()}`);
}

/** Starts a TypeScript entry point that listens on PORT; resolves once `readyPath` answers. */
export async function startChildServer(
  entry: string,
  env: Record<string, string>,
  readyPath = '/',
  cwd = repoRoot,
): Promise<ChildServer> {
  const port = await freePort();
  // BENCH_SERVER_NODE_ARGS (say `--cpu-prof --cpu-prof-dir=/tmp/prof`) profiles the servers under test.
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, ...tsNode, entry], {
    cwd,
    env: { ...process.env, ...env, HOST: '127.0.0.1', PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr = (stderr + d).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}${readyPath}`, child, () => stderr);
  const pid = child.pid!;
  return {
    url,
    pid,
    child,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
