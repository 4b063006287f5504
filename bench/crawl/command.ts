/**
 * `npm run bench -- crawl [--concurrency 6] [--jobs 32] [--share 0.01] [--seed 7] [--repos N]`: a full crawl of the generated
 * corpus from the GitHub stand-in into a fresh benchmark database, then a re-crawl after one commit in
 * `share` of the repositories. Reports repositories/s, skills/s, the worker's peak memory and the bytes
 * the git server sent, against the skill folders' bytes and against full clones. The crawler runs as a
 * child process (its own CLI), so its memory is its own; the stand-in runs here and logs every git byte.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startGithubStandin } from '../../test/support/github-standin.js';
import type { GeneratedCorpus } from '../corpus/generate.js';
import {
  corpusDir,
  ensureBenchDatabase,
  indexedSkills,
  loadManifest,
  processMemory,
  repoRoot,
  tsNode,
} from '../lib/env.js';
import { type BenchRow, writeResult } from '../lib/report.js';
import { round } from '../lib/stats.js';
import { mutateCorpus } from './mutate.js';

interface CrawlPass {
  seconds: number;
  peakRssMiB: number;
  exitCode: number;
  summary: string;
  /** Stopped at the time limit before every repository was crawled. */
  partial: boolean;
}

/** Bytes the git server sent and received for a set of repositories. */
interface GitBytes {
  total: number;
  fetch: number;
  requests: number;
}

/** Runs `crawler crawl --repos-file` as a child process, sampling its peak resident memory. */
function crawlOnce(
  reposFile: string,
  env: Record<string, string>,
  limitMs: number,
  nodeArgs: string[] = [],
): Promise<CrawlPass> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(
      process.execPath,
      [
        ...nodeArgs,
        ...tsNode,
        path.join(repoRoot, 'apps/crawler/src/main.ts'),
        'crawl',
        '--repos-file',
        reposFile,
      ],
      { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr = (stderr + d).slice(-8000);
    });
    let peak = 0;
    const sample = () => {
      try {
        peak = Math.max(peak, processMemory(child.pid!).peakMiB);
      } catch {
        // the process just ended
      }
    };
    const timer = setInterval(sample, 250);
    let partial = false;
    // On a busy machine the full pass can take hours: stop at the limit and report what was crawled.
    const limit =
      limitMs > 0
        ? setTimeout(() => {
            partial = true;
            child.kill('SIGTERM');
          }, limitMs)
        : undefined;
    child.on('error', reject);
    child.on('exit', (code) => {
      clearInterval(timer);
      clearTimeout(limit);
      if (!partial && code !== 0 && code !== 1) {
        reject(new Error(`crawler exited with ${code}:\n${stderr}`));
        return;
      }
      resolve({
        seconds: (performance.now() - started) / 1000,
        peakRssMiB: peak,
        exitCode: code ?? -1,
        summary: stdout.trim().split('\n').slice(-2).join(' | '),
        partial,
      });
    });
  });
}

/** Bytes of the packs of every bare repository: what a full `git clone --bare` transfers, about. */
function packBytes(reposRoot: string, only?: Set<string>): number {
  let total = 0;
  for (const owner of readdirSync(reposRoot)) {
    for (const repo of readdirSync(path.join(reposRoot, owner))) {
      if (only && !only.has(`${owner}/${repo.replace(/\.git$/, '')}`.toLowerCase())) continue;
      const packDir = path.join(reposRoot, owner, repo, 'objects', 'pack');
      for (const f of readdirSync(packDir))
        if (f.endsWith('.pack')) total += statSync(path.join(packDir, f)).size;
    }
  }
  return total;
}

/** `owner/repo` (lower case) of every repository with a finished crawl report. */
async function crawledRepositories(databaseUrl: string): Promise<Set<string>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const r = await client.query(
      `select distinct lower(r.owner || '/' || r.name) as name
       from crawl_reports c join repositories r on r.id = c.repository_id where c.finished_at is not null`,
    );
    return new Set(r.rows.map((row) => row.name as string));
  } finally {
    await client.end();
  }
}

/** The last full pass, from the previous result file (for `--recrawl-only`). */
function previousResult(name: string): { full: CrawlPass & { git: GitBytes }; rows: BenchRow[] } {
  const file = path.join(repoRoot, 'bench', 'results', `${name}.json`);
  if (!existsSync(file))
    throw new Error(`--recrawl-only needs a previous full crawl (bench/results/${name}.json)`);
  const result = JSON.parse(readFileSync(file, 'utf8'));
  if (result.full?.partial !== false) throw new Error('the previous crawl result is not a full pass');
  return { full: result.full, rows: result.rows };
}

/** Every (total/size)-th repository of the manifest, from the middle of each stride. */
function subsetOf(manifest: GeneratedCorpus, size: number): GeneratedCorpus {
  const stride = manifest.repos.length / Math.min(size, manifest.repos.length);
  const repos: GeneratedCorpus['repos'] = [];
  for (let at = stride / 2; at < manifest.repos.length; at += stride)
    repos.push(manifest.repos[Math.floor(at)]!);
  return { ...manifest, repos };
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      // Jobs that fetch with git at once (CRAWL_GIT_CONCURRENCY), and jobs in flight (CRAWL_CONCURRENCY:
      // most of a re-crawl's jobs only wait on one conditional REST request).
      concurrency: { type: 'string', default: '6' },
      jobs: { type: 'string', default: '32' },
      share: { type: 'string', default: '0.01' },
      seed: { type: 'string', default: '7' },
      minutes: { type: 'string', default: '0' },
      // Re-crawl the existing index only (after a crawler change): one unmeasured pass without changes
      // settles the stored ETags and heads, then the measured pass; the full-pass row is kept from the
      // previous result file.
      'recrawl-only': { type: 'boolean', default: false },
      // A stratified subset of N repositories (every (total/N)-th of the manifest, which is sorted by size,
      // so the long tail and a few large ones are both in it): iterate on a crawler change in minutes,
      // written to crawl-<N>-repos.json so the full figure in crawl.json stays.
      repos: { type: 'string', default: '0' },
      // Writes a V8 CPU profile of each measured crawler process into this folder (where its time goes).
      'cpu-prof': { type: 'string' },
    },
  });
  const recrawlOnly = values['recrawl-only'] === true;
  const profileDir = values['cpu-prof'] ? path.resolve(values['cpu-prof']) : undefined;
  const nodeArgs = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const fullManifest = loadManifest();
  const subsetSize = Number(values.repos);
  const manifest = subsetSize > 0 ? subsetOf(fullManifest, subsetSize) : fullManifest;
  const resultName = subsetSize > 0 ? `crawl-${manifest.repos.length}-repos` : 'crawl';
  const limitMs = Number(values.minutes) * 60_000;
  const reposRoot = path.join(corpusDir, 'repos');
  const skillFolderBytes = manifest.repos.reduce((s, r) => s + r.skillFolderBytes, 0);
  const totalBytes = manifest.repos.reduce((s, r) => s + r.totalBytes, 0);
  const reposFile =
    subsetSize > 0
      ? path.join(corpusDir, `subset-${manifest.repos.length}.txt`)
      : path.join(corpusDir, 'repos.txt');
  if (subsetSize > 0)
    writeFileSync(reposFile, `${manifest.repos.map((r) => `gh:${r.owner}/${r.repo}`).join('\n')}\n`);
  const url = await ensureBenchDatabase(!recrawlOnly);
  const standin = await startGithubStandin({ reposRoot });
  const env = {
    DATABASE_URL: url,
    GITHUB_API_URL: standin.apiUrl,
    GIT_BASE_URL: standin.gitUrl,
    CRAWL_CONCURRENCY: values.jobs!,
    CRAWL_GIT_CONCURRENCY: values.concurrency!,
    // The per-minute limit protects GitHub; against the stand-in it would only cap the figure.
    CRAWL_RATE_LIMIT_PER_MINUTE: '1000000',
    // The largest repository (6,300 skills) on a busy 2-core machine needs more than the 2-minute default.
    CRAWL_JOB_TIMEOUT_MS: '3600000',
    LOG_LEVEL: 'warn',
  };
  const gitBytes = (repos: Set<string>): GitBytes => {
    const log = standin.git.log.filter((e) => repos.has(e.repo.toLowerCase()));
    return {
      total: log.reduce((s, e) => s + e.bytesOut + e.bytesIn, 0),
      fetch: log.filter((e) => e.command === 'fetch').reduce((s, e) => s + e.bytesOut, 0),
      requests: log.length,
    };
  };
  try {
    const clonePackBytes = packBytes(reposRoot);
    const previous = recrawlOnly ? previousResult(resultName) : undefined;
    if (recrawlOnly) {
      console.error('settling pass over the existing index (not measured)...');
      await crawlOnce(reposFile, env, 0);
    } else console.error(`full crawl of ${manifest.repos.length} repositories...`);
    standin.git.resetLog();
    const full = previous?.full ?? (await crawlOnce(reposFile, env, limitMs, nodeArgs));
    // The repositories the pass finished (all of them unless it was stopped at the limit).
    const done = await crawledRepositories(url);
    const crawled = manifest.repos.filter((r) => done.has(`${r.owner}/${r.repo}`.toLowerCase()));
    const fullBytes = previous?.full.git ?? gitBytes(done);
    const skills = await indexedSkills(url);
    const crawledSkills = crawled.reduce((s, r) => s + r.skills.length, 0);
    const crawledFolderBytes = crawled.reduce((s, r) => s + r.skillFolderBytes, 0);
    const crawledRawBytes = crawled.reduce((s, r) => s + r.totalBytes, 0);
    const crawledPackBytes = packBytes(reposRoot, done);

    console.error(`changing ${values.share} of the crawled repositories and crawling them again...`);
    const subsetFile = path.join(corpusDir, 'crawled-repos.txt');
    writeFileSync(subsetFile, `${crawled.map((r) => `gh:${r.owner}/${r.repo}`).join('\n')}\n`);
    const mutation = mutateCorpus(reposRoot, crawled, {
      share: Number(values.share),
      seed: Number(values.seed),
    });
    standin.git.resetLog();
    const again = await crawlOnce(subsetFile, env, 0, nodeArgs);
    const againBytes = gitBytes(done);
    const skillsAfter = await indexedSkills(url);

    const mib = (b: number) => round(b / 2 ** 20, 3);
    /** One pass's row: throughput, memory, and its bytes against its baseline and full clones. */
    const passRow = (
      label: string,
      pass: CrawlPass,
      bytes: GitBytes,
      counts: { skills: number; indexedSkills: number },
      baselineBytes: number,
      digits: number,
    ): BenchRow => ({
      pass: label,
      repositories: crawled.length,
      ...counts,
      seconds: round(pass.seconds, 1),
      'repos/s': round(crawled.length / pass.seconds, 2),
      'skills/s': round(crawledSkills / pass.seconds, 1),
      peakRssMiB: pass.peakRssMiB,
      downloadedMiB: mib(bytes.total),
      skillFolderMiB: mib(baselineBytes),
      'x skill folders': round(bytes.total / Math.max(1, baselineBytes), 2),
      'x full clones (packs)': round(bytes.total / crawledPackBytes, digits),
      'x full clones (raw)': round(bytes.total / crawledRawBytes, digits),
    });
    const rows: BenchRow[] = [
      previous?.rows[0] ??
        passRow(
          full.partial
            ? `full crawl (stopped at ${values.minutes} min: ${crawled.length} of ${manifest.repos.length} repos)`
            : 'full crawl',
          full,
          fullBytes,
          { skills: crawledSkills, indexedSkills: skills },
          crawledFolderBytes,
          2,
        ),
      passRow(
        `re-crawl of those (${mutation.repositories.length} changed)`,
        again,
        againBytes,
        { skills: crawledSkills + mutation.added - mutation.deleted, indexedSkills: skillsAfter },
        mutation.changedBytes,
        4,
      ),
    ];
    writeResult(resultName, rows, {
      mode: recrawlOnly
        ? 'recrawl-only: the full pass (row 1, `full`) is kept from the previous run'
        : 'full crawl, then a re-crawl',
      concurrency: Number(values.concurrency),
      jobsInFlight: Number(values.jobs),
      corpus: { repositories: manifest.repos.length, skillFolderBytes, totalBytes, clonePackBytes },
      target: 'downloaded < 1.5x the skill folders',
      full: { ...full, git: fullBytes },
      recrawl: { ...again, git: againBytes, mutation },
      notes: [
        'process start-up (tsx, migrations) is inside each pass',
        'the re-crawl baseline is the bytes of the changed SKILL.md files; every unchanged repository costs one conditional GET /repos/{owner}/{repo} (304) and no git',
        'bytes are counted for the finished repositories only (the git server log, both directions)',
      ],
    });
    writeFileSync(path.join(corpusDir, 'last-mutation.json'), JSON.stringify(mutation, null, 2));
  } finally {
    await standin.close();
  }
}
