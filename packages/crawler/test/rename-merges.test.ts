// One repository under two names: crawled under its new name before the hub heard of the rename, two rows
// with one GitHub id crawled in one run, a row merged away while its job runs, and a new repository made at
// a renamed one's old name. Each ends with one row per repository, every job's report, runs that finish
// and a job counter that never falls; against the GitHub stand-in and real git.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  crawlOutcomeTotals,
  crawlReports,
  crawlReportsOfRun,
  crawlRunProgress,
  createCrawlRun,
  currentRepositoryName,
  moveRepository,
  repositories,
  repositoryRedirects,
  skills,
} from '@atskills/db';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRepo } from '../../../test/support/corpus.js';
import { ContentPool } from '../src/content/content-pool.js';
import { type Crawler, createCrawler } from '../src/crawler.js';
import { GitSlots } from '../src/git-slots.js';
import { GithubClient } from '../src/github/github-client.js';
import { type CrawlDeps, crawlRepository } from '../src/jobs/repository.crawl.js';
import { completeRuns } from '../src/jobs/run-completion.js';
import { UnchangedReportBatch } from '../src/jobs/unchanged-batch.js';
import { type CrawlFixture, startCrawlFixture, testLogger } from './crawl-fixture.js';

const skill = (name: string) => `---\nname: ${name}\ndescription: The ${name} skill.\n---\nSteps.\n`;

let root: string;
let fx: CrawlFixture;
let crawler: Crawler;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'atskills-rename-merges-'));
  await createRepo(root, 'tester/hostile-new', { 'deploy/SKILL.md': skill('deploy') });
  await createRepo(root, 'tester/pair-v3', { 'lint/SKILL.md': skill('lint') });
  await createRepo(root, 'tester/racer', { 'race/SKILL.md': skill('race') });
  await createRepo(root, 'tester/hostile', { 'old/SKILL.md': skill('old') });
  fx = await startCrawlFixture('rename_merges', root);
  // One job at a time: the jobs of a run go in name order, so which job merges first is known.
  crawler = createCrawler({
    db: fx.db.db,
    settings: fx.settings({ CRAWL_CONCURRENCY: 1 }),
    logger: testLogger,
  });
}, 120_000);

afterAll(async () => {
  await crawler?.close({ deadlineMs: 1000 });
  await fx?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

/** Runs a crawl of `repos`; fails the test instead of waiting for ever when the run never finishes. */
async function crawl(repos: string[]) {
  const runId = await crawler.startRun({ kind: 'repos', source: { kind: 'repos', repos } });
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(async () => {
      const progress = await crawlRunProgress(fx.db.db, runId);
      reject(new Error(`run ${runId} still running: ${JSON.stringify(progress)}`));
    }, 30_000);
  });
  try {
    return await Promise.race([crawler.waitForRun(runId, { pollMs: 50 }), stuck]);
  } finally {
    clearTimeout(timer);
  }
}

const rowsWithGithubId = (githubId: number) =>
  fx.db.db.select().from(repositories).where(eq(repositories.githubId, githubId));

const jobsCounted = async () =>
  Object.values(await crawlOutcomeTotals(fx.db.db)).reduce((sum, n) => sum + n, 0);

describe('a repository crawled under its new name before the rename was seen', () => {
  it('merges into the row it had, instead of indexing it twice', { timeout: 60_000 }, async () => {
    await crawl(['tester/hostile-new']);
    const [before] = await fx.db.db
      .select()
      .from(skills)
      .where(eq(skills.identity, 'gh:tester/hostile-new/deploy'));
    await fx.standin.renameRepository('tester/hostile-new', 'tester/hostile-v3');
    const counted = await jobsCounted();

    // An index request, a push or a discovery names the repository by its new name.
    const run = await crawl(['tester/hostile-v3']);

    expect(run.status).toBe('finished');
    const rows = await rowsWithGithubId(fx.standin.idOf('tester/hostile-v3'));
    expect(rows.map((r) => `${r.owner}/${r.name}`)).toEqual(['tester/hostile-v3']);
    const [after] = await fx.db.db.select().from(skills).where(eq(skills.id, before!.id));
    expect(after).toMatchObject({ identity: 'gh:tester/hostile-v3/deploy', goneAt: null });
    expect(await currentRepositoryName(fx.db.db, 'tester', 'hostile-new')).toMatchObject({
      name: 'hostile-v3',
      moved: true,
    });
    expect(await jobsCounted()).toBe(counted + 1);
  });
});

describe('two rows with one GitHub id crawled in one run', () => {
  it('finishes the run with a report of each job on the row that stays', { timeout: 60_000 }, async () => {
    const first = await crawl(['tester/pair-v3']);
    expect(first.status).toBe('finished');
    await fx.standin.renameRepository('tester/pair-v3', 'tester/pair-v4');
    const githubId = fx.standin.idOf('tester/pair-v4');
    // What an earlier release left: a second row for the new name, with the same GitHub id and a report.
    const [duplicate] = await fx.db.db
      .insert(repositories)
      .values({ owner: 'tester', name: 'pair-v4', githubId })
      .returning();
    const earlier = await createCrawlRun(fx.db.db, { kind: 'repos', repositoriesTotal: 1 });
    await fx.db.db
      .insert(crawlReports)
      .values({ runId: earlier, repositoryId: duplicate!.id, outcome: 'failed', queuedAs: 'tester/pair-v4' });
    const counted = await jobsCounted();

    const run = await crawl(['tester/pair-v3', 'tester/pair-v4']);

    expect(run).toMatchObject({ status: 'finished', repositoriesDone: 2 });
    const rows = await rowsWithGithubId(githubId);
    expect(rows.map((r) => `${r.owner}/${r.name}`)).toEqual(['tester/pair-v4']);
    const reports = await crawlReportsOfRun(fx.db.db, run.id);
    expect(reports.map((r) => [r.report.queuedAs, `${r.owner}/${r.name}`]).sort()).toEqual([
      ['tester/pair-v3', 'tester/pair-v4'],
      ['tester/pair-v4', 'tester/pair-v4'],
    ]);
    // The merged row's report went to the row that stayed: the job counter only grows.
    const [kept] = await fx.db.db.select().from(crawlReports).where(eq(crawlReports.runId, earlier));
    expect(kept?.repositoryId).toBe(rows[0]!.id);
    expect(await jobsCounted()).toBe(counted + 2);
  });
});

describe('a job whose row is merged away while it runs', () => {
  it('starts again on the row that stayed and reports there', { timeout: 60_000 }, async () => {
    const db = fx.db.db;
    await crawl(['tester/racer']);
    await fx.standin.renameRepository('tester/racer', 'tester/racer-v2');
    const githubId = fx.standin.idOf('tester/racer-v2');
    const [original] = await db.select().from(repositories).where(eq(repositories.githubId, githubId));
    // A second row for the new name, settled at the same head with GitHub's current ETag: its job's
    // metadata answers 304, so it reports through the batch of unchanged repositories.
    const etag = (await fetch(`${fx.standin.apiUrl}/repositories/${githubId}`)).headers.get('etag');
    await db.insert(repositories).values({
      owner: 'tester',
      name: 'racer-v2',
      githubId,
      headRevision: original!.headRevision,
      lastCrawlOutcome: 'unchanged',
      metadataEtag: etag,
    });
    const settings = fx.settings();
    const github = new GithubClient({ baseUrl: settings.githubApiUrl, logger: testLogger });
    // The job of the old name, running beside this one, merges the rows while this one waits for GitHub.
    const racing = Object.assign(Object.create(github) as GithubClient, {
      async repositoryById(id: number, tag?: string | null) {
        await moveRepository(
          db,
          { owner: 'tester', name: 'racer' },
          { owner: 'tester', name: 'racer-v2', githubId },
        );
        return github.repositoryById(id, tag);
      },
    });
    const deps: CrawlDeps = {
      db,
      settings,
      github: racing,
      logger: testLogger,
      gitSlots: new GitSlots(1),
      contentPool: new ContentPool(0),
      unchangedReports: new UnchangedReportBatch(db, (runIds) => completeRuns(deps, runIds)),
    };
    const runId = await createCrawlRun(db, { kind: 'repos', repositoriesTotal: 1 });

    const result = await crawlRepository(
      deps,
      { runId, owner: 'tester', repo: 'racer-v2', force: false },
      { signal: new AbortController().signal, finalAttempt: true },
    );

    expect(result.outcome).toBe('unchanged');
    const reports = await crawlReportsOfRun(db, runId);
    expect(reports.map((r) => [r.report.repositoryId, `${r.owner}/${r.name}`])).toEqual([
      [original!.id, 'tester/racer-v2'],
    ]);
    expect(await crawlRunProgress(db, runId)).toMatchObject({ status: 'finished', repositoriesDone: 1 });
    await deps.contentPool.close();
  });
});

describe('a new repository made at a renamed repository’s old name', () => {
  it('drops the redirect and indexes the new repository under the name', { timeout: 60_000 }, async () => {
    const db = fx.db.db;
    await crawl(['tester/hostile']);
    await fx.standin.renameRepository('tester/hostile', 'tester/hostile-moved');
    await crawl(['tester/hostile']);
    expect(await currentRepositoryName(db, 'tester', 'hostile')).toMatchObject({
      name: 'hostile-moved',
      moved: true,
    });
    // Someone makes another repository at the old name: GitHub answers it with its own id, not a redirect.
    await createRepo(root, 'tester/hostile', { 'fresh/SKILL.md': skill('fresh') });
    expect(fx.standin.idOf('tester/hostile')).not.toBe(fx.standin.idOf('tester/hostile-moved'));

    // What an index request or a push for the old name queues: the name as asked.
    const run = await crawl(['tester/hostile']);

    expect(run.outcomes).toMatchObject({ indexed: 1, failed: 0, gone: 0 });
    expect(await currentRepositoryName(db, 'tester', 'hostile')).toMatchObject({
      name: 'hostile',
      moved: false,
    });
    const [fresh] = await db.select().from(repositories).where(sql`lower(name) = 'hostile'`);
    expect(fresh?.githubId).toBe(fx.standin.idOf('tester/hostile'));
    const live = await db
      .select({ identity: skills.identity })
      .from(skills)
      .where(sql`gone_at is null and owner = 'tester' and container in ('hostile', 'hostile-moved')`);
    expect(live.map((s) => s.identity).sort()).toEqual([
      'gh:tester/hostile-moved/old',
      'gh:tester/hostile/fresh',
    ]);
    expect(await db.select().from(repositoryRedirects).where(sql`lower(old_name) = 'hostile'`)).toEqual([]);
  });
});
