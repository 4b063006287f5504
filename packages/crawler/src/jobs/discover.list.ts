import { allRepositoryNames, setCrawlRunTotal } from '@atskills/db';
import type { DiscoverJobData, DiscoverySource, RepositoryJobData } from '@atskills/queue';
import type { CrawlDeps } from './repository.crawl.js';
import { completeRuns } from './run-completion.js';

/** Lists the repositories a discovery source names, as sorted unique `owner/repo`. */
export async function listRepositories(
  deps: Pick<CrawlDeps, 'db' | 'github'>,
  source: DiscoverySource,
): Promise<string[]> {
  let names: string[];
  switch (source.kind) {
    case 'repos':
      names = source.repos;
      break;
    case 'code-search':
      // The whole public corpus: code search split under GitHub's cap, the skills topics, and every
      // repository the index already knows (found before, requested, pushed by a webhook).
      names = [...(await deps.github.searchSkillRepositories()), ...(await allRepositoryNames(deps.db))];
      break;
    case 'org':
      names = await deps.github.ownerRepositories(source.name);
      break;
    case 'known':
      names = await allRepositoryNames(deps.db);
      break;
  }
  // GitHub names are case-insensitive: keep the first spelling of each.
  const unique = new Map<string, string>();
  for (const name of names) if (!unique.has(name.toLowerCase())) unique.set(name.toLowerCase(), name);
  return [...unique.values()].sort();
}

/**
 * A discovery job: lists repositories, records the run's total, and enqueues one repository job per
 * repository (job ids dedupe a re-run of this job). A rate limit propagates and delays the job.
 */
export async function discoverRepositories(
  deps: CrawlDeps,
  data: DiscoverJobData,
  enqueue: (jobs: RepositoryJobData[]) => Promise<void>,
): Promise<{ repositories: number }> {
  const names = await listRepositories(deps, data.source);
  await setCrawlRunTotal(deps.db, data.runId, names.length);
  await enqueue(
    names.map((name) => {
      const [owner = '', repo = ''] = name.split('/');
      return { runId: data.runId, owner, repo, force: data.force, requestId: data.requestId };
    }),
  );
  // An empty discovery finishes its run at once.
  await completeRuns(deps, [data.runId]);
  deps.logger.info({ runId: data.runId, source: data.source.kind, repositories: names.length }, 'discovered');
  return { repositories: names.length };
}
