/**
 * `npm run bench -- crawl [--concurrency 4] [--share 0.01] [--seed 7]`: a full crawl of the generated
 * corpus from the GitHub stand-in into a fresh benchmark database, then a re-crawl after one commit in
 * `share` of the repositories. Reports repositories/s, skills/s, the worker's peak memory and the bytes
 * the git server sent, against the skill folders' bytes and against full clones. The crawler runs as a
 * child process (its own CLI), so its memory is its own; the stand-in runs here and logs every git byte.
 */
import { spawn } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startGithubStandin } from '../../test/support/github-standin.js';
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
}

/** Runs `crawler crawl --repos-file` as a child process, sampling its peak resident memory. */
function crawlOnce(reposFile: string, env: Record<string, string>): Promise<CrawlPass> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(
      process.execPath,
      [...tsNode, path.join(repoRoot, 'apps/crawler/src/main.ts'), 'crawl', '--repos-file', reposFile],
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
    child.on('error', reject);
    child.on('exit', (code) => {
      clearInterval(timer);
      if (code !== 0 && code !== 1) {
        reject(new Error(`crawler exited with ${code}:\n${stderr}`));
        return;
      }
      resolve({
        seconds: (performance.now() - started) / 1000,
        peakRssMiB: peak,
        exitCode: code ?? -1,
        summary: stdout.trim().split('\n').slice(-2).join(' | '),
      });
    });
  });
}

/** Bytes of the packs of every bare repository: what a full `git clone --bare` transfers, about. */
function packBytes(reposRoot: string): number {
  let total = 0;
  for (const owner of readdirSync(reposRoot)) {
    for (const repo of readdirSync(path.join(reposRoot, owner))) {
      const packDir = path.join(reposRoot, owner, repo, 'objects', 'pack');
      for (const f of readdirSync(packDir))
        if (f.endsWith('.pack')) total += statSync(path.join(packDir, f)).size;
    }
  }
  return total;
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      concurrency: { type: 'string', default: '4' },
      share: { type: 'string', default: '0.01' },
      seed: { type: 'string', default: '7' },
    },
  });
  const manifest = loadManifest();
  const reposRoot = path.join(corpusDir, 'repos');
  const skillFolderBytes = manifest.repos.reduce((s, r) => s + r.skillFolderBytes, 0);
  const totalBytes = manifest.repos.reduce((s, r) => s + r.totalBytes, 0);
  const reposFile = path.join(corpusDir, 'repos.txt');
  const url = await ensureBenchDatabase(true);
  const standin = await startGithubStandin({ reposRoot });
  const env = {
    DATABASE_URL: url,
    GITHUB_API_URL: standin.apiUrl,
    GIT_BASE_URL: standin.gitUrl,
    CRAWL_CONCURRENCY: values.concurrency!,
    // The per-minute limit protects GitHub; against the stand-in it would only cap the figure.
    CRAWL_RATE_LIMIT_PER_MINUTE: '1000000',
    CRAWL_JOB_TIMEOUT_MS: '600000',
    LOG_LEVEL: 'warn',
  };
  const gitBytes = () => {
    const log = standin.git.log;
    return {
      total: log.reduce((s, e) => s + e.bytesOut + e.bytesIn, 0),
      fetch: log.filter((e) => e.command === 'fetch').reduce((s, e) => s + e.bytesOut, 0),
      requests: log.length,
    };
  };
  try {
    const clonePackBytes = packBytes(reposRoot);
    console.error(`full crawl of ${manifest.repos.length} repositories...`);
    standin.git.resetLog();
    const full = await crawlOnce(reposFile, env);
    const fullBytes = gitBytes();
    const skills = await indexedSkills(url);
    const totalSkills = manifest.repos.reduce((s, r) => s + r.skills.length, 0);

    console.error('changing 1% of the repositories and crawling again...');
    const mutation = mutateCorpus(reposRoot, manifest.repos, {
      share: Number(values.share),
      seed: Number(values.seed),
    });
    standin.git.resetLog();
    const again = await crawlOnce(reposFile, env);
    const againBytes = gitBytes();
    const skillsAfter = await indexedSkills(url);
    // Only the changed repositories' skill folders had to be downloaded again.
    const changedFolderBytes = mutation.changedBytes;

    const mib = (b: number) => round(b / 2 ** 20, 3);
    const rows: BenchRow[] = [
      {
        pass: 'full crawl',
        repositories: manifest.repos.length,
        skills: totalSkills,
        indexedSkills: skills,
        seconds: round(full.seconds, 1),
        'repos/s': round(manifest.repos.length / full.seconds, 1),
        'skills/s': round(totalSkills / full.seconds, 0),
        peakRssMiB: full.peakRssMiB,
        downloadedMiB: mib(fullBytes.total),
        baselineMiB: mib(skillFolderBytes),
        'x skill folders': round(fullBytes.total / skillFolderBytes, 2),
        'x full clones (packs)': round(fullBytes.total / clonePackBytes, 2),
        'x full clones (raw)': round(fullBytes.total / totalBytes, 2),
      },
      {
        pass: `re-crawl (${mutation.repositories.length} repos changed)`,
        repositories: manifest.repos.length,
        skills: totalSkills + mutation.added - mutation.deleted,
        indexedSkills: skillsAfter,
        seconds: round(again.seconds, 1),
        'repos/s': round(manifest.repos.length / again.seconds, 1),
        'skills/s': round(skillsAfter / again.seconds, 0),
        peakRssMiB: again.peakRssMiB,
        downloadedMiB: mib(againBytes.total),
        baselineMiB: mib(changedFolderBytes),
        'x skill folders': round(againBytes.total / Math.max(1, changedFolderBytes), 2),
        'x full clones (packs)': round(againBytes.total / clonePackBytes, 4),
        'x full clones (raw)': round(againBytes.total / totalBytes, 4),
      },
    ];
    writeResult('crawl', rows, {
      concurrency: Number(values.concurrency),
      target: 'downloaded < 1.5x the skill folders',
      skillFolderBytes,
      clonePackBytes,
      totalBytes,
      full: { ...full, git: fullBytes },
      recrawl: { ...again, git: againBytes, mutation },
      note: 'the re-crawl baseline is the bytes of the changed SKILL.md files; every unchanged repository costs one ls-remote probe',
    });
    writeFileSync(path.join(corpusDir, 'last-mutation.json'), JSON.stringify(mutation, null, 2));
  } finally {
    await standin.close();
  }
}
