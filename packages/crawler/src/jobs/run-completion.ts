import { finishCompletedRuns, refreshSearchStatistics } from '@atskills/db';
import type { CrawlDeps } from './repository.crawl.js';

/**
 * The one place a crawl run completes: finishes those of `runIds` whose every repository has its report
 * (a repository job's last write, or a discovery that found nothing), then refreshes the search
 * statistics the planner uses, since a run may have changed thousands of rows. Returns the finished ids.
 */
export async function completeRuns(deps: CrawlDeps, runIds: number[]): Promise<number[]> {
  const finished = await finishCompletedRuns(deps.db, runIds);
  if (finished.length > 0) {
    // Best effort: a run's index is complete without it, search is only slower until autovacuum runs.
    await refreshSearchStatistics(deps.db).catch((err) =>
      deps.logger.warn({ err, runIds: finished }, 'could not refresh search statistics after the run'),
    );
  }
  return finished;
}
