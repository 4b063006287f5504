import { corpusStats, type Database, findRepositoryWithReport, type ReadScope } from '@atskills/db';
import { formatIdentity } from '@atskills/protocol';
import { problem } from '../problems.js';
import type { RepositoryReport, StatsResponse } from '../schemas.js';

function iso(d: Date | null | undefined): string | null {
  return d ? d.toISOString() : null;
}

/** A crawled repository and its latest crawl report (GET /v1/repos/<owner>/<repo>), or 404. */
export async function getRepositoryReport(
  db: Database,
  owner: string,
  repo: string,
): Promise<RepositoryReport> {
  const found = await findRepositoryWithReport(db, owner, repo);
  if (!found) throw problem('not-found', `The hub has not crawled ${owner}/${repo}`);
  const { repo: r, report } = found;
  return {
    owner: r.owner,
    name: r.name,
    identity: formatIdentity('gh', `${r.owner}/${r.name}`),
    defaultBranch: r.defaultBranch,
    headRevision: r.headRevision,
    description: r.description,
    stars: r.stars,
    license: r.license,
    archived: r.archived,
    gone: r.goneAt !== null,
    skills: found.skills,
    lastCrawledAt: iso(r.lastCrawledAt),
    lastCrawlOutcome: r.lastCrawlOutcome,
    lastCrawlError: r.lastCrawlError,
    report: report
      ? {
          outcome: report.outcome,
          headRevision: report.headRevision,
          skillsFound: report.skillsFound,
          skillsAdded: report.skillsAdded,
          skillsUpdated: report.skillsUpdated,
          skillsRemoved: report.skillsRemoved,
          warnings: report.warnings,
          errors: report.errors,
          durationMs: report.durationMs,
          startedAt: report.startedAt.toISOString(),
          finishedAt: iso(report.finishedAt),
        }
      : null,
  };
}

/** Corpus size and the last crawl, as the viewer may see them (GET /v1/stats). */
export async function getStats(
  db: Database,
  viewer: ReadScope,
  searchEngine: string,
): Promise<StatsResponse> {
  const s = await corpusStats(db, viewer);
  return {
    skills: s.skills,
    repositories: s.repositories,
    collections: s.collections,
    gone: s.gone,
    searchEngine,
    lastCrawl: s.lastCrawl
      ? {
          id: s.lastCrawl.id,
          kind: s.lastCrawl.kind,
          status: s.lastCrawl.status,
          startedAt: s.lastCrawl.startedAt.toISOString(),
          finishedAt: iso(s.lastCrawl.finishedAt),
        }
      : null,
  };
}
