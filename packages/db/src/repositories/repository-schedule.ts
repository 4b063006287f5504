import { and, asc, isNotNull, isNull, lte, sql } from 'drizzle-orm';
import type { Database, Executor } from '../client.js';
import { repositories } from '../schema/repositories.js';

/** What the re-crawl schedule of a repository depends on. */
export interface RepositoryActivityRow {
  id: number;
  owner: string;
  name: string;
  pushedAt: Date | null;
  archived: boolean;
  goneAt: Date | null;
  lastCrawlOutcome: string | null;
  lastCrawledAt: Date | null;
}

const activityColumns = {
  id: repositories.id,
  owner: repositories.owner,
  name: repositories.name,
  pushedAt: repositories.pushedAt,
  archived: repositories.archived,
  goneAt: repositories.goneAt,
  lastCrawlOutcome: repositories.lastCrawlOutcome,
  lastCrawledAt: repositories.lastCrawledAt,
};

/** Repositories crawled (by discovery, a list, a rebuild) but never given a re-crawl date; at most `limit`. */
export async function unscheduledRepositories(db: Executor, limit: number): Promise<RepositoryActivityRow[]> {
  return db
    .select(activityColumns)
    .from(repositories)
    .where(and(isNull(repositories.nextCrawlAt), isNotNull(repositories.lastCrawledAt)))
    .limit(limit);
}

/** Sets the next re-crawl date of each repository, in one statement. */
export async function setNextCrawlDates(db: Executor, dates: { id: number; at: Date }[]): Promise<void> {
  if (dates.length === 0) return;
  const rows = sql.join(
    dates.map((d) => sql`(${d.id}::bigint, ${d.at.toISOString()}::timestamptz)`),
    sql`, `,
  );
  await db.execute(
    sql`update ${repositories} set next_crawl_at = v.at from (values ${rows}) as v(id, at) where ${repositories.id} = v.id`,
  );
}

/**
 * Claims the repositories due at `now` (oldest date first, at most `limit`) and moves each one's date to
 * `nextAt(repository)`, in one transaction; SKIP LOCKED lets an overlapping tick pass the claimed rows by.
 */
export async function claimDueRepositories(
  db: Database,
  now: Date,
  limit: number,
  nextAt: (repository: RepositoryActivityRow) => Date,
): Promise<RepositoryActivityRow[]> {
  return db.transaction(async (tx) => {
    const due = await tx
      .select(activityColumns)
      .from(repositories)
      .where(lte(repositories.nextCrawlAt, now))
      .orderBy(asc(repositories.nextCrawlAt), asc(repositories.id))
      .limit(limit)
      .for('update', { skipLocked: true });
    await setNextCrawlDates(
      tx,
      due.map((repository) => ({ id: repository.id, at: nextAt(repository) })),
    );
    return due;
  });
}
