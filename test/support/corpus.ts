/**
 * Rebuilds real git repositories from ../shared/corpus (see its README): one bare repository per
 * corpus entry, laid out as `<root>/<owner>/<repo>.git` so a smart-HTTP server can serve it.
 * Built once per machine into a cache folder keyed by the corpus content, then reused.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, cp, mkdir, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The repository root of this project. */
export const repoRoot = path.resolve(import.meta.dirname, '..', '..');

/** Where the shared corpus lives (override with ATSKILLS_CORPUS_DIR). */
export const corpusReposDir =
  process.env.ATSKILLS_CORPUS_DIR ?? path.resolve(repoRoot, '..', 'shared', 'corpus', 'repos');

export interface CorpusMeta {
  owner: string;
  repo: string;
  default_branch: string;
  head: string;
  license_spdx: string | null;
  notes?: { withheld_restrictive_license?: string[]; [key: string]: unknown };
}

export interface TreeLine {
  mode: string;
  size: number | null;
  sha: string;
  path: string;
}

/** Every corpus repository as `owner/repo`, sorted. */
export async function listCorpusRepos(reposDir = corpusReposDir): Promise<string[]> {
  const out: string[] = [];
  for (const owner of await readdir(reposDir)) {
    for (const repo of await readdir(path.join(reposDir, owner))) {
      if (existsSync(path.join(reposDir, owner, repo, 'tree.tsv'))) out.push(`${owner}/${repo}`);
    }
  }
  return out.sort();
}

/** Reads a corpus entry's meta.json. */
export async function readCorpusMeta(fullName: string, reposDir = corpusReposDir): Promise<CorpusMeta> {
  return JSON.parse(await readFile(path.join(reposDir, fullName, 'meta.json'), 'utf8')) as CorpusMeta;
}

/** Reads a corpus entry's tree.tsv. */
export async function readCorpusTree(fullName: string, reposDir = corpusReposDir): Promise<TreeLine[]> {
  const text = await readFile(path.join(reposDir, fullName, 'tree.tsv'), 'utf8');
  return text
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => {
      const [mode, size, sha, ...rest] = line.split('\t');
      return { mode: mode!, size: size === '-' ? null : Number(size), sha: sha!, path: rest.join('\t') };
    });
}

async function readSymlinks(dir: string): Promise<Map<string, string>> {
  const file = path.join(dir, 'symlinks.tsv');
  const links = new Map<string, string>();
  if (!existsSync(file)) return links;
  for (const line of (await readFile(file, 'utf8')).split('\n')) {
    if (!line) continue;
    const [from, to] = line.split('\t');
    links.set(from!, to!);
  }
  return links;
}

/** Environment for git commands in tests: no user config, fixed identity, fixed dates. */
export function gitEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_AUTHOR_NAME: 'corpus',
    GIT_AUTHOR_EMAIL: 'corpus@example.invalid',
    GIT_COMMITTER_NAME: 'corpus',
    GIT_COMMITTER_EMAIL: 'corpus@example.invalid',
    GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
    GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
    ...extra,
  };
}

/** Runs git and returns stdout. */
export async function git(args: string[], cwd: string, env: Record<string, string> = {}): Promise<string> {
  const { stdout } = await run('git', args, { cwd, env: gitEnv(env), maxBuffer: 256 * 1024 * 1024 });
  return stdout;
}

/**
 * Builds one corpus entry as a working repository at `workDir` (step 1 and 2 of the corpus README):
 * copied bytes where files/ has them, placeholders of the listed size elsewhere, symlinks as listed.
 */
export async function buildCorpusWorktree(fullName: string, workDir: string, reposDir = corpusReposDir) {
  const src = path.join(reposDir, fullName);
  const meta = await readCorpusMeta(fullName, reposDir);
  const tree = await readCorpusTree(fullName, reposDir);
  const links = await readSymlinks(src);
  await rm(workDir, { recursive: true, force: true });
  await mkdir(workDir, { recursive: true });
  for (const entry of tree) {
    const target = path.join(workDir, entry.path);
    await mkdir(path.dirname(target), { recursive: true });
    if (entry.mode === '120000') {
      await symlink(links.get(entry.path) ?? 'missing-link-target', target);
      continue;
    }
    const copied = path.join(src, 'files', entry.path);
    if (existsSync(copied)) await cp(copied, target);
    else await writeFile(target, Buffer.alloc(entry.size ?? 0, 0x20));
    if (entry.mode === '100755') await chmod(target, 0o755);
  }
  await git(['init', '-q', '-b', meta.default_branch], workDir);
  await git(['add', '-A'], workDir);
  await git(['commit', '-q', '-m', `snapshot of ${fullName}`], workDir);
  return meta;
}

/** Turns a working repository into a bare one at `bareDir` (what the git server serves). */
export async function makeBare(workDir: string, bareDir: string): Promise<void> {
  await rm(bareDir, { recursive: true, force: true });
  await mkdir(path.dirname(bareDir), { recursive: true });
  await git(['clone', '-q', '--bare', workDir, bareDir], path.dirname(bareDir));
  // Partial clones and lazy blob fetches need these on the serving side.
  await git(['config', 'uploadpack.allowFilter', 'true'], bareDir);
  await git(['config', 'uploadpack.allowAnySHA1InWant', 'true'], bareDir);
  await git(['config', 'http.receivepack', 'true'], bareDir);
}

async function corpusFingerprint(reposDir: string): Promise<string> {
  const hash = createHash('sha256');
  for (const name of await listCorpusRepos(reposDir)) {
    hash.update(name);
    hash.update(await readFile(path.join(reposDir, name, 'meta.json')));
    hash.update(await readFile(path.join(reposDir, name, 'tree.tsv')));
  }
  hash.update('v1');
  return hash.digest('hex').slice(0, 16);
}

/**
 * Builds (once per machine, cached under the OS temp folder) bare repositories for every corpus entry
 * and returns the folder that holds `<owner>/<repo>.git`. Safe when several test files call it at once:
 * each builds into a private folder and the first rename wins.
 */
export async function buildCorpusRepos(reposDir = corpusReposDir): Promise<string> {
  const finalDir = path.join(tmpdir(), `atskills-corpus-${await corpusFingerprint(reposDir)}`);
  if (existsSync(path.join(finalDir, '.complete'))) return finalDir;
  const staging = `${finalDir}.staging-${process.pid}-${Date.now()}`;
  const names = await listCorpusRepos(reposDir);
  for (const name of names) {
    const work = path.join(staging, '.work', name);
    await buildCorpusWorktree(name, work, reposDir);
    await makeBare(work, path.join(staging, `${name}.git`));
  }
  await rm(path.join(staging, '.work'), { recursive: true, force: true });
  await writeFile(path.join(staging, '.complete'), names.join('\n'));
  try {
    await rename(staging, finalDir);
  } catch {
    // Another process finished first; its copy is identical.
    await rm(staging, { recursive: true, force: true });
  }
  return finalDir;
}

/** Copies prebuilt bare repositories into a private folder a test may modify (push commits, delete). */
export async function privateCopyOfCorpus(destDir: string, reposDir = corpusReposDir): Promise<string> {
  const shared = await buildCorpusRepos(reposDir);
  await rm(destDir, { recursive: true, force: true });
  await cp(shared, destDir, { recursive: true, verbatimSymlinks: true });
  return destDir;
}

/**
 * Creates a bare repository `<root>/<owner>/<repo>.git` from a map of files (path -> content; a value
 * `{ symlink: target }` makes a symlink). Returns the working clone's folder for later commits.
 */
export async function createRepo(
  root: string,
  fullName: string,
  files: Record<string, string | Buffer | { symlink: string }>,
  branch = 'main',
): Promise<{ bareDir: string; workDir: string }> {
  const workDir = path.join(root, '.work', fullName);
  const bareDir = path.join(root, `${fullName}.git`);
  await rm(workDir, { recursive: true, force: true });
  await mkdir(workDir, { recursive: true });
  await git(['init', '-q', '-b', branch], workDir);
  await writeTree(workDir, files);
  await git(['add', '-A'], workDir);
  await git(['commit', '-q', '--allow-empty', '-m', 'initial'], workDir);
  await makeBare(workDir, bareDir);
  await git(['remote', 'add', 'origin', bareDir], workDir);
  return { bareDir, workDir };
}

async function writeTree(workDir: string, files: Record<string, string | Buffer | { symlink: string }>) {
  for (const [rel, content] of Object.entries(files)) {
    const target = path.join(workDir, rel);
    await mkdir(path.dirname(target), { recursive: true });
    await rm(target, { force: true, recursive: true });
    if (typeof content === 'object' && !Buffer.isBuffer(content)) await symlink(content.symlink, target);
    else await writeFile(target, content);
  }
}

/**
 * Commits changes to a repository made by createRepo (a value of null deletes the path) and pushes to
 * its bare repository. Returns the new head revision.
 */
export async function commitToRepo(
  workDir: string,
  changes: Record<string, string | Buffer | { symlink: string } | null>,
  message = 'change',
): Promise<string> {
  const writes: Record<string, string | Buffer | { symlink: string }> = {};
  for (const [rel, content] of Object.entries(changes)) {
    if (content === null) await rm(path.join(workDir, rel), { recursive: true, force: true });
    else writes[rel] = content;
  }
  await writeTree(workDir, writes);
  await git(['add', '-A'], workDir);
  await git(['commit', '-q', '--allow-empty', '-m', message], workDir, {
    GIT_COMMITTER_DATE: new Date().toISOString(),
    GIT_AUTHOR_DATE: new Date().toISOString(),
  });
  const branch = (await git(['rev-parse', '--abbrev-ref', 'HEAD'], workDir)).trim();
  await git(['push', '-q', 'origin', branch], workDir);
  return (await git(['rev-parse', 'HEAD'], workDir)).trim();
}
