import { crawlStatus, type Database } from '@atskills/db';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/**
 * The crawl status as `GET /v1/crawl-status` answers it: the last run, repositories due for a re-crawl, the
 * most recent failures. Error texts can name internal hosts (GitHub Enterprise, proxies): operators only.
 */
export async function crawlStatusView(db: Database, now: Date, operator: boolean) {
  const status = await crawlStatus(db, now);
  return {
    lastRun: status.lastRun && {
      id: status.lastRun.id,
      kind: status.lastRun.kind,
      status: status.lastRun.status,
      repositoriesTotal: status.lastRun.repositoriesTotal,
      startedAt: status.lastRun.startedAt.toISOString(),
      finishedAt: iso(status.lastRun.finishedAt),
    },
    repositories: status.repositories,
    due: status.due,
    nextDueAt: iso(status.nextDueAt),
    failuresTotal: status.failuresTotal,
    failures: status.failures.map((f) => ({
      repository: `${f.owner}/${f.name}`,
      at: iso(f.at),
      ...(operator && f.error ? { error: f.error } : {}),
    })),
  };
}
