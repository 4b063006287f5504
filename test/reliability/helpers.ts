/**
 * Shared fixtures of the reliability tests: a few small skill repositories served by the GitHub
 * stand-in, and a crawl that indexes them, so each fault test starts from a real index.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Crawler, createCrawler, settingsWith } from '@atskills/crawler';
import { crawlReportsOfRun, type Database, skills } from '@atskills/db';
import { expect } from 'vitest';
import { createRepo } from '../support/corpus.js';
import { type GithubStandin, startGithubStandin } from '../support/github-standin.js';

/** A SKILL.md with valid frontmatter. */
export function skillMarkdown(name: string, description: string, body = 'Steps to follow.'): string {
  return `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n\n${body}\n`;
}

export interface SkillRepos {
  /** `owner/repo` of every repository made. */
  names: string[];
  standin: GithubStandin;
  close(): Promise<void>;
}

/**
 * Makes `count` repositories `relia-org/repo-<i>`, each with two skills (`skills/deploy-<i>` and
 * `skills/review-<i>`), and serves them through the GitHub stand-in.
 */
export async function startSkillRepos(count: number): Promise<SkillRepos> {
  const root = await mkdtemp(path.join(tmpdir(), 'atskills-relia-'));
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const name = `relia-org/repo-${i}`;
    await createRepo(root, name, {
      [`skills/deploy-${i}/SKILL.md`]: skillMarkdown(
        `deploy-${i}`,
        `Deploy service number ${i} with a runbook`,
      ),
      [`skills/review-${i}/SKILL.md`]: skillMarkdown(`review-${i}`, `Review pull requests for project ${i}`),
      [`skills/review-${i}/checklist.md`]: '- tests pass\n- docs updated\n',
    });
    names.push(name);
  }
  const standin = await startGithubStandin({ reposRoot: root });
  return {
    names,
    standin,
    async close() {
      await standin.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** Crawler settings pointing at the stand-in, quiet, with short retry delays. */
export function crawlerSettings(standin: GithubStandin, extra: Parameters<typeof settingsWith>[0] = {}) {
  return settingsWith({
    GITHUB_API_URL: standin.apiUrl,
    GIT_BASE_URL: standin.gitUrl,
    LOG_LEVEL: 'silent',
    CRAWL_BACKOFF_MS: 200,
    ...extra,
  });
}

/** Indexes `names` (default: every repository of `repos`) with the in-process crawler (no Redis) and waits for the run. */
export async function crawlInProcess(db: Database, repos: SkillRepos, names = repos.names): Promise<void> {
  const crawler: Crawler = createCrawler({ db, settings: crawlerSettings(repos.standin) });
  try {
    const runId = await crawler.startRun({ kind: 'repos', source: { kind: 'repos', repos: names } });
    const done = await crawler.waitForRun(runId, { pollMs: 50 });
    if (done.status !== 'finished' || done.outcomes.indexed !== names.length) {
      throw new Error(`seed crawl ended as ${JSON.stringify(done)}`);
    }
  } finally {
    await crawler.close();
  }
}

/**
 * Polls a crawl run until at least one repository is done (the moment the fault tests cut a service, so
 * the cut lands mid-crawl) and returns that progress.
 */
export async function firstRepositoryDone(producer: Crawler, runId: number) {
  let progress = await producer.progress(runId);
  while ((progress?.repositoriesDone ?? 0) < 1) {
    await new Promise((r) => setTimeout(r, 25));
    progress = await producer.progress(runId);
  }
  return progress;
}

/**
 * Waits for a crawl run that met a fault and checks it ended whole: finished with no failure, one report
 * per repository (a job redelivered after the fault found its report and did nothing twice), and every
 * skill of the repositories `names` (made by startSkillRepos) indexed exactly once.
 */
export async function expectCrawledOnce(
  db: Database,
  crawler: Crawler,
  runId: number,
  names: string[],
): Promise<void> {
  const done = await crawler.waitForRun(runId, { pollMs: 100 });
  expect(done.status).toBe('finished');
  expect(done.outcomes.failed).toBe(0);
  expect(done.repositoriesDone).toBe(names.length);
  const reports = await crawlReportsOfRun(db, runId);
  expect(reports.map((r) => `${r.owner}/${r.name}`).sort()).toEqual([...names].sort());
  const identities = (await db.select({ identity: skills.identity }).from(skills)).map((r) => r.identity);
  expect(new Set(identities).size).toBe(identities.length);
  for (const name of names) {
    const i = name.split('-').pop();
    expect(identities).toContain(`gh:${name}/skills/deploy-${i}`);
    expect(identities).toContain(`gh:${name}/skills/review-${i}`);
  }
}

/** What one request of a load run got back. */
export interface LoadSample {
  path: string;
  /** HTTP status, or 0 when the request was aborted by its timeout or the connection failed. */
  status: number;
  retryAfter: string | null;
  /** The problem code of an error answer. */
  code: string | null;
  error?: string;
}

/**
 * Sends `requests` GETs to `baseUrl` cycling through `paths`, `concurrency` at a time, each bounded by
 * `timeoutMs` (a request still unanswered then counts as status 0: it hung).
 */
export async function runLoad(
  baseUrl: string,
  paths: string[],
  options: {
    requests: number;
    concurrency: number;
    timeoutMs: number;
    method?: 'GET' | 'HEAD';
    /** Called after each answer with the number answered so far (a test cuts a service mid-load here). */
    onSample?: (answered: number) => void;
  },
): Promise<LoadSample[]> {
  const samples: LoadSample[] = [];
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < options.requests; i = next++) {
      const target = paths[i % paths.length] as string;
      try {
        const res = await fetch(`${baseUrl}${target}`, {
          method: options.method ?? 'GET',
          signal: AbortSignal.timeout(options.timeoutMs),
        });
        const text = await res.text();
        let code: string | null = null;
        if (res.headers.get('content-type')?.startsWith('application/problem+json')) {
          code = (JSON.parse(text) as { code?: string }).code ?? null;
        }
        samples.push({ path: target, status: res.status, retryAfter: res.headers.get('retry-after'), code });
      } catch (err) {
        samples.push({ path: target, status: 0, retryAfter: null, code: null, error: (err as Error).name });
      }
      options.onSample?.(samples.length);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  return samples;
}

/** Counts samples by status, e.g. `{ 200: 38, 503: 2 }`, for readable assertion failures. */
export function byStatus(samples: LoadSample[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const s of samples) out[s.status] = (out[s.status] ?? 0) + 1;
  return out;
}
