import { asc, count, desc, eq, min, sql } from 'drizzle-orm';
import type { Executor } from '../client.js';
import { crawlReports, crawlRuns } from '../schema/crawls.js';
import { repositories } from '../schema/repositories.js';

/** What the crawl-status endpoint and the web page's crawl-status section show. */
export interface CrawlStatus {
  lastRun: {
    id: number;
    kind: string;
    status: string;
    repositoriesTotal: number;
    startedAt: Date;
    finishedAt: Date | null;
    totals: Record<string, number>;
  } | null;
  repositories: number;
  /** Repositories whose next probe is due now. */
  due: number;
  /** The earliest scheduled probe (null when nothing is scheduled). */
  nextDueAt: Date | null;
  /** Repositories whose last crawl failed, most recent first (at most `failuresShown`). */
  failures: { owner: string; name: string; error: string | null; at: Date | null }[];
  failuresTotal: number;
}

/** Crawl status for operators and the web page: last run, how many repositories are due, recent failures. */
export async function crawlStatus(
  db: Executor,
  now: Date = new Date(),
  failuresShown = 10,
): Promise<CrawlStatus> {
  const [lastRun] = await db
    .select()
    .from(crawlRuns)
    .orderBy(desc(crawlRuns.startedAt), desc(crawlRuns.id))
    .limit(1);
  const [totals] = await db
    .select({
      repositories: count(),
      due: sql<number>`count(*) filter (where ${repositories.nextCrawlAt} <= ${now.toISOString()})`.mapWith(
        Number,
      ),
      failuresTotal: sql<number>`count(*) filter (where ${repositories.lastCrawlOutcome} = 'failed')`.mapWith(
        Number,
      ),
      nextDueAt: min(repositories.nextCrawlAt),
    })
    .from(repositories);
  const failures = await db
    .select({
      owner: repositories.owner,
      name: repositories.name,
      error: repositories.lastCrawlError,
      at: repositories.lastCrawledAt,
    })
    .from(repositories)
    .where(eq(repositories.lastCrawlOutcome, 'failed'))
    .orderBy(sql`${repositories.lastCrawledAt} desc nulls last`, asc(repositories.id))
    .limit(failuresShown);
  return {
    lastRun: lastRun
      ? {
          id: lastRun.id,
          kind: lastRun.kind,
          status: lastRun.status,
          repositoriesTotal: lastRun.repositoriesTotal,
          startedAt: lastRun.startedAt,
          finishedAt: lastRun.finishedAt,
          totals: lastRun.totals,
        }
      : null,
    repositories: totals?.repositories ?? 0,
    due: totals?.due ?? 0,
    nextDueAt: totals?.nextDueAt ? new Date(totals.nextDueAt) : null,
    failures,
    failuresTotal: totals?.failuresTotal ?? 0,
  };
}

/** Repository jobs ever recorded, by outcome (indexed, unchanged, failed, gone): the crawl job counter's source. */
export async function crawlOutcomeTotals(db: Executor): Promise<Record<string, number>> {
  const rows = await db
    .select({ outcome: crawlReports.outcome, n: count() })
    .from(crawlReports)
    .groupBy(crawlReports.outcome);
  return Object.fromEntries(rows.map((r) => [r.outcome, Number(r.n)]));
}
