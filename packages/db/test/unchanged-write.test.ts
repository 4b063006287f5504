// The set-based write of unchanged repositories' reports: what writeRepositoryIndex writes for one, for many.
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import {
  crawlReports,
  createCrawlRun,
  ensureRepository,
  repositories,
  skills,
  startRepositoryJob,
  writeUnchangedReports,
} from '../src/index.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase('unchanged-write');
});

afterAll(async () => {
  await db?.drop();
});

const skillRow = (repositoryId: number, path: string, goneAt: Date | null = null) => ({
  identity: `gh:acme/tools/${path}`,
  source: 'gh',
  repositoryId,
  owner: 'acme',
  container: 'tools',
  path,
  name: path,
  description: `The ${path} skill.`,
  revision: `rev-${path}`,
  goneAt,
});

describe('writeUnchangedReports', () => {
  it('marks each repository crawled and writes one report per run with its live skills, once', async () => {
    const tools = await ensureRepository(db.db, 'acme', 'tools');
    const empty = await ensureRepository(db.db, 'acme', 'empty');
    await db.db.insert(skills).values([skillRow(tools.id, 'a'), skillRow(tools.id, 'b', new Date())]);
    const runId = await createCrawlRun(db.db, { kind: 'repos', repositoriesTotal: 2 });
    const startedAt = new Date(Date.now() - 50);
    const entry = (repositoryId: number, run: number | null) => ({
      repositoryId,
      runId: run,
      head: { commit: 'c0ffee', branch: 'main' },
      warnings: [],
      errors: [],
      startedAt,
    });

    const results = await writeUnchangedReports(db.db, [
      entry(tools.id, runId),
      // A redelivered job beside the original, in the same batch: written once.
      entry(tools.id, runId),
      entry(empty.id, runId),
      // A job outside any run (nothing to report to) still marks the repository crawled.
      entry(empty.id, null),
    ]);
    expect(results).toEqual([
      { written: true, skillsFound: 1 },
      { written: false, skillsFound: 0 },
      { written: true, skillsFound: 0 },
      { written: true, skillsFound: 0 },
    ]);
    const reports = await db.db.select().from(crawlReports).where(eq(crawlReports.runId, runId));
    expect(reports.map((r) => [r.repositoryId, r.outcome, r.skillsFound, r.headRevision]).sort()).toEqual(
      [
        [tools.id, 'unchanged', 1, 'c0ffee'],
        [empty.id, 'unchanged', 0, 'c0ffee'],
      ].sort(),
    );
    expect(reports.every((r) => r.durationMs >= 0 && r.finishedAt !== null)).toBe(true);
    const [row] = await db.db.select().from(repositories).where(eq(repositories.id, tools.id));
    expect(row).toMatchObject({
      lastCrawlOutcome: 'unchanged',
      headRevision: 'c0ffee',
      defaultBranch: 'main',
    });
    expect(row!.lastCrawledAt).not.toBeNull();

    // The same run again (a job redelivered after the batch committed): nothing more.
    expect(await writeUnchangedReports(db.db, [entry(tools.id, runId)])).toEqual([
      { written: false, skillsFound: 0 },
    ]);
    expect((await startRepositoryJob(db.db, 'ACME', 'Tools', runId)).reported).toBe(true);
    expect((await startRepositoryJob(db.db, 'acme', 'tools', null)).reported).toBe(false);
    const created = await startRepositoryJob(db.db, 'acme', 'brand-new', runId);
    expect(created).toMatchObject({ reported: false, repository: { owner: 'acme', name: 'brand-new' } });
    expect(created.repository.crawlStartedAt).not.toBeNull();
  });
});
