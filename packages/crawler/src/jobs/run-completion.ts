import {
  crawlRunChangedIndex,
  type Database,
  finishCompletedRuns,
  refreshSearchStatistics,
} from '@atskills/db';
import type { Logger } from 'pino';

/**
 * The one place a crawl run completes: finishes those of `runIds` whose every repository has its report
 * (a repository job's last write, or a discovery that found nothing), then refreshes the search
 * statistics the planner uses when one of them changed the index (a run may have changed thousands of
 * rows; one that changed none leaves them as they are). Returns the finished ids. Takes only the database
 * and the logger (any job's CrawlDeps fits), so the crawl job that calls it is not imported back.
 */
export async function completeRuns(
  deps: { db: Database; logger: Logger },
  runIds: number[],
): Promise<number[]> {
  const finished = await finishCompletedRuns(deps.db, runIds);
  const changed = await Promise.all(finished.map((runId) => crawlRunChangedIndex(deps.db, runId)));
  if (changed.some(Boolean)) {
    // Best effort: a run's index is complete without it, search is only slower until autovacuum runs.
    await refreshSearchStatistics(deps.db).catch((err) =>
      deps.logger.warn({ err, runIds: finished }, 'could not refresh search statistics after the run'),
    );
  }
  return finished;
}
