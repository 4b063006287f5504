// Queries whose RETURNING subquery names a column of the updated row: drizzle writes RETURNING columns
// unqualified, where an unqualified `id` inside the subquery is the subquery's own. The case sets up ids
// that collide the way a fresh database makes them collide (a report whose id equals its repository's id).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { crawlReports, createCrawlRun, ensureRepository, startRepositoryJob } from '../src/index.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase('correlated');
});

afterAll(async () => {
  await db?.drop();
});

describe('startRepositoryJob', () => {
  it("says reported only for this repository's own report in the run", async () => {
    const crawled = await ensureRepository(db.db, 'acme', 'crawled');
    const waiting = await ensureRepository(db.db, 'acme', 'waiting');
    const runId = await createCrawlRun(db.db, { kind: 'repos', repositoriesTotal: 2 });
    // The crawled repository's report gets the id equal to its repository's id, as in a fresh database.
    await db.db
      .insert(crawlReports)
      .values({ id: crawled.id, runId, repositoryId: crawled.id, outcome: 'indexed' });

    expect((await startRepositoryJob(db.db, 'acme', 'waiting', runId)).reported).toBe(false);
    expect((await startRepositoryJob(db.db, 'acme', 'crawled', runId)).reported).toBe(true);
    expect((await startRepositoryJob(db.db, 'acme', 'waiting', null)).reported).toBe(false);
    expect(waiting.id).not.toBe(crawled.id);
  });
});
