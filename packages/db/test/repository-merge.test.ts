// A rename that merges two rows of one repository keeps what the row that gives way had: its crawl
// reports (the job counter and the runs' counts never fall) and the old names that led to it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import {
  crawlOutcomeTotals,
  crawlReports,
  crawlRunProgress,
  createCrawlRun,
  currentRepositoryName,
  moveRepository,
  repositories,
  repositoryRedirects,
  skills,
} from '../src/index.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase('repository-merge');
});

afterAll(async () => {
  await db?.drop();
});

describe('moveRepository merging two rows of one GitHub id', () => {
  it('hands the reports and redirects of the row that gives way to the one that stays', async () => {
    const [kept] = await db.db
      .insert(repositories)
      .values({ owner: 'acme', name: 'tools', githubId: 42 })
      .returning();
    await db.db.insert(skills).values({
      identity: 'gh:acme/tools/deploy',
      source: 'gh',
      repositoryId: kept!.id,
      owner: 'acme',
      container: 'tools',
      path: 'deploy',
      name: 'deploy',
      description: 'Deploys.',
      revision: 'rev-deploy',
    });
    // The same repository crawled under its new name, with reports of its own and an old name of its own.
    const [twin] = await db.db
      .insert(repositories)
      .values({ owner: 'acme', name: 'toolbox', githubId: 42 })
      .returning();
    await db.db
      .insert(repositoryRedirects)
      .values({ oldOwner: 'acme', oldName: 'toolkit', repositoryId: twin!.id });
    const runId = await createCrawlRun(db.db, { kind: 'repos', repositoriesTotal: 2 });
    await db.db.insert(crawlReports).values([
      { runId, repositoryId: kept!.id, outcome: 'indexed', queuedAs: 'acme/tools' },
      { runId, repositoryId: twin!.id, outcome: 'unchanged', queuedAs: 'acme/toolbox' },
    ]);
    const totals = await crawlOutcomeTotals(db.db);

    const move = await moveRepository(
      db.db,
      { owner: 'acme', name: 'tools' },
      { owner: 'acme', name: 'toolbox', githubId: 42 },
    );

    expect(await crawlOutcomeTotals(db.db)).toEqual(totals);
    expect((await crawlRunProgress(db.db, runId))?.repositoriesDone).toBe(2);
    expect(move).toMatchObject({ moved: true, merged: 1 });
    for (const old of ['tools', 'toolkit']) {
      expect(await currentRepositoryName(db.db, 'acme', old)).toMatchObject({ name: 'toolbox', moved: true });
    }
  });
});
