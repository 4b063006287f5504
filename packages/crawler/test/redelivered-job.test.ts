// A repository job retried or redelivered after its report was committed (its first attempt failed, or its
// worker died, between the report's commit and the run's completion) must still finish the run: every
// later attempt finds the report and writes nothing, so it is the only one left to complete the run.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  crawlReportsOfRun,
  crawlRunProgress,
  createCrawlRun,
  ensureRepository,
  writeRepositoryIndex,
} from '@atskills/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRepo } from '../../../test/support/corpus.js';
import { ContentPool } from '../src/content/content-pool.js';
import { GitSlots } from '../src/git-slots.js';
import { GithubClient } from '../src/github/github-client.js';
import {
  type CrawlDeps,
  crawlRepository,
  recordAbandonedRepositoryJob,
} from '../src/jobs/repository.crawl.js';
import { completeRuns } from '../src/jobs/run-completion.js';
import { UnchangedReportBatch } from '../src/jobs/unchanged-batch.js';
import { type CrawlFixture, startCrawlFixture, testLogger } from './crawl-fixture.js';

let root: string;
let fx: CrawlFixture;
let deps: CrawlDeps;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'atskills-redelivered-'));
  await createRepo(root, 'redo/skills', {
    'deploy/SKILL.md': '---\nname: deploy\ndescription: Deploys the service.\n---\nSteps.\n',
  });
  fx = await startCrawlFixture('redelivered', root);
  const settings = fx.settings();
  deps = {
    db: fx.db.db,
    settings,
    github: new GithubClient({ baseUrl: settings.githubApiUrl, logger: testLogger }),
    logger: testLogger,
    gitSlots: new GitSlots(1),
    contentPool: new ContentPool(0),
    unchangedReports: new UnchangedReportBatch(fx.db.db, (runIds) => completeRuns(deps, runIds)),
  };
}, 120_000);

afterAll(async () => {
  await fx?.close();
  await rm(root, { recursive: true, force: true });
});

/** The report an attempt committed for redo/skills in the run (with no skills). */
async function writeIndexedReport(runId: number): Promise<void> {
  const repository = await ensureRepository(fx.db.db, 'redo', 'skills', { started: true });
  await writeRepositoryIndex(fx.db.db, {
    repositoryId: repository.id,
    runId,
    outcome: 'indexed',
    skills: [],
    startedAt: new Date(),
    warnings: [],
    errors: [],
    bytesDownloaded: 0,
  });
}

describe('a repository job whose report is already written', () => {
  it('finishes its run instead of leaving it running', async () => {
    const db = fx.db.db;
    const runId = await createCrawlRun(db, { kind: 'repos', repositoriesTotal: 1 });
    // What the first attempt committed before it failed ahead of completing the run.
    await writeIndexedReport(runId);
    expect((await crawlRunProgress(db, runId))?.status).toBe('running');

    const retried = await crawlRepository(
      deps,
      { runId, owner: 'redo', repo: 'skills', force: false },
      { signal: new AbortController().signal, finalAttempt: false },
    );

    expect(retried.outcome).toBe('duplicate');
    expect(await crawlReportsOfRun(db, runId)).toHaveLength(1);
    const run = await crawlRunProgress(db, runId);
    expect(run).toMatchObject({ status: 'finished', repositoriesDone: 1 });
  });
});

describe('a repository job the queue gave up on', () => {
  it('records a failure report and finishes the run when the job left none (it stalled past the limit)', async () => {
    const db = fx.db.db;
    const runId = await createCrawlRun(db, { kind: 'repos', repositoriesTotal: 1 });
    await recordAbandonedRepositoryJob(
      deps,
      { runId, owner: 'redo', repo: 'skills', force: false },
      'job stalled more than allowable limit',
    );

    const reports = await crawlReportsOfRun(db, runId);
    expect(reports).toHaveLength(1);
    expect(reports[0]!.report).toMatchObject({ outcome: 'failed' });
    expect(reports[0]!.report.errors).toEqual([
      {
        path: '',
        code: 'crawl-abandoned',
        message: 'The crawl job ended without a result: job stalled more than allowable limit',
      },
    ]);
    expect(await crawlRunProgress(db, runId)).toMatchObject({
      status: 'finished',
      outcomes: { failed: 1, indexed: 0 },
    });
  });

  it('keeps the report a last attempt wrote before it failed, and finishes the run', async () => {
    const db = fx.db.db;
    const runId = await createCrawlRun(db, { kind: 'repos', repositoriesTotal: 1 });
    await writeIndexedReport(runId);
    await recordAbandonedRepositoryJob(
      deps,
      { runId, owner: 'redo', repo: 'skills', force: false },
      'Connection terminated unexpectedly',
    );

    const reports = await crawlReportsOfRun(db, runId);
    expect(reports.map((r) => r.report.outcome)).toEqual(['indexed']);
    expect(await crawlRunProgress(db, runId)).toMatchObject({ status: 'finished', repositoriesDone: 1 });
  });
});
