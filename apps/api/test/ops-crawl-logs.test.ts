/**
 * What operators see of a crawl a request started: every job logs with the request's id, no token
 * appears in any line, and the GitHub rate-limit gauge and crawl outcome counter follow the crawl.
 * Runs the in-process crawler against the GitHub stand-in (as the embedded mode does).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { createCrawler, settingsWith } from '@atskills/crawler';
import { crawlOutcomeTotals } from '@atskills/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRepo } from '../../../test/support/corpus.js';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { type GithubStandin, startGithubStandin } from '../../../test/support/github-standin.js';
import { crawlMetricsSink, createHubMetrics } from '../src/plugins/metrics.js';
import { startGithubRateLimitPoll } from '../src/runtime/github-rate-limit.js';
import { loggerOptions } from '../src/runtime/logging.js';

const TOKEN = 'ghp_0123456789abcdefghijklmnopqrstuvwxyzAB';

let root: string;
let database: TestDatabase;
let standin: GithubStandin;
const lines: Record<string, unknown>[] = [];

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'atskills-ops-logs-'));
  await createRepo(root, 'ops/skills', {
    'deploy/SKILL.md': '---\nname: deploy\ndescription: Deploy things.\n---\nbody\n',
  });
  [database, standin] = await Promise.all([
    createTestDatabase('ops_logs'),
    startGithubStandin({ reposRoot: root }),
  ]);
}, 120_000);

afterAll(async () => {
  await standin?.close();
  await database?.drop();
  await rm(root, { recursive: true, force: true });
});

describe('a crawl started by a request', () => {
  it('logs every job with the request id, never the token, and feeds the metrics', async () => {
    const { pino } = await import('pino');
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const text of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(text));
        done();
      },
    });
    const logger = pino(loggerOptions('debug'), sink);
    const metrics = createHubMetrics({ defaultMetrics: false });
    metrics.setCrawlOutcomeSource(() => crawlOutcomeTotals(database.db));
    const crawler = createCrawler({
      db: database.db,
      settings: settingsWith({
        GITHUB_API_URL: standin.apiUrl,
        GIT_BASE_URL: standin.gitUrl,
        GITHUB_TOKEN: TOKEN,
        CRAWL_BACKOFF_MS: 200,
      }),
      logger: logger.child({ component: 'crawler' }),
      metrics: crawlMetricsSink(metrics),
    });
    try {
      const runId = await crawler.startRun({
        kind: 'repos',
        source: { kind: 'repos', repos: ['ops/skills'] },
        requestId: 'req-ops-logs-1',
      });
      const run = await crawler.waitForRun(runId, { pollMs: 50 });
      expect(run.outcomes).toMatchObject({ indexed: 1 });
    } finally {
      await crawler.close();
    }

    const jobLines = lines.filter((l) => l.component === 'crawler');
    expect(jobLines.length).toBeGreaterThan(0);
    expect(jobLines.find((l) => l.msg === 'discovered')).toMatchObject({ requestId: 'req-ops-logs-1' });
    // The repository job's lines (phases, outcome) carry the id too.
    const repositoryLines = jobLines.filter((l) => l.repo === 'ops/skills');
    expect(repositoryLines.length).toBeGreaterThan(0);
    for (const line of repositoryLines) expect(line.requestId).toBe('req-ops-logs-1');
    expect(JSON.stringify(lines)).not.toContain(TOKEN);

    const text = await metrics.registry.metrics();
    expect(text).toContain('atskills_github_rate_limit_remaining{resource="core"} 4999');
    expect(text).toContain('atskills_crawl_jobs_total{outcome="indexed"} 1');
  });

  it('redacts credentials that reach a log line anyway', () => {
    const captured: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        captured.push(String(chunk));
        done();
      },
    });
    return import('pino').then(({ pino }) => {
      const log = pino(loggerOptions('info'), sink);
      log.info(
        {
          req: { headers: { authorization: `Bearer ${TOKEN}`, cookie: 'session=abc' } },
          settings: { GITHUB_TOKEN: TOKEN, MEILI_MASTER_KEY: 'meili-master-key' },
          token: TOKEN,
        },
        'request',
      );
      // An error handler that logs a database error as it is: its SQL and parameters stay out.
      const failed = new Error(
        'Failed query: select "id" from "repositories" where owner = $1\nparams: secret-owner',
      );
      Object.assign(failed, {
        cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      });
      log.error({ err: failed }, 'page failed');
      const out = captured.join('');
      expect(out).not.toContain(TOKEN);
      expect(out).not.toContain('meili-master-key');
      expect(out).not.toContain('session=abc');
      expect(out).toContain('[redacted]');
      expect(out).not.toMatch(/select|secret-owner/);
      expect(out).toContain('connect ECONNREFUSED');
    });
  });

  it('reads the rate limit workers share from GitHub when crawls run elsewhere', async () => {
    const metrics = createHubMetrics({ defaultMetrics: false });
    const sink = crawlMetricsSink(metrics);
    const poll = startGithubRateLimitPoll({
      apiUrl: standin.apiUrl,
      token: TOKEN,
      report: sink.githubRateLimit,
    });
    try {
      await poll.poll();
    } finally {
      poll.close();
    }
    const text = await metrics.registry.metrics();
    expect(text).toContain('atskills_github_rate_limit_remaining{resource="core"} 4999');
    expect(text).toContain('atskills_github_rate_limit_remaining{resource="search"} 30');
    const wrong = startGithubRateLimitPoll({
      apiUrl: `${standin.apiUrl}/nowhere`,
      token: TOKEN,
      report: sink.githubRateLimit,
    });
    await expect(wrong.poll()).rejects.toThrow(/answered 404/);
    wrong.close();
  });
});
