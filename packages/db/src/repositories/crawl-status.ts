import type { Executor } from '../client.js';
import { latestCrawlRun } from './crawls.js';
import { recentCrawlFailures, repositoryCrawlTotals } from './repositories.js';

// The crawl-status read (the endpoint and the web page's section): the last run (crawls.ts) beside the
// repositories' schedule and failures (repositories.ts). crawlOutcomeTotals is in crawls.ts.

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
  const lastRun = await latestCrawlRun(db);
  const totals = await repositoryCrawlTotals(db, now);
  const failures = await recentCrawlFailures(db, failuresShown);
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
