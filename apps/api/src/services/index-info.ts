import {
  corpusStats,
  type Database,
  findRepositoryWithReport,
  type ReadScope,
  repositoryStatus,
} from '@atskills/db';
import { formatIdentity } from '@atskills/protocol';
import type { RepositoryReport, StatsResponse } from '../schemas.js';

function iso(d: Date | null | undefined): string | null {
  return d ? d.toISOString() : null;
}

/** What anyone but an operator reads of a crawl that failed on the hub's side (its error names paths). */
const CRAWL_FAILED_PUBLICLY =
  "The crawl failed on the hub's side; it is tried again at the next re-crawl (operators read why in /v1/crawl-status).";

/**
 * The index status of a repository (GET /v1/repos/<owner>/<repo>, the repository page), or where it moved.
 * A crawl's own error text (a clone's, a file system's) is for operators (`viewer.isAdmin`) only.
 */
export async function getRepositoryReport(
  db: Database,
  owner: string,
  repo: string,
  viewer: { isAdmin: boolean },
): Promise<RepositoryReport | { movedTo: { owner: string; name: string } }> {
  const status = await repositoryStatus(db, owner, repo);
  if ('movedTo' in status) return status;
  const r = status.repository;
  const report = r ? (await findRepositoryWithReport(db, r.owner, r.name))?.report : undefined;
  return {
    owner: status.owner,
    name: status.name,
    identity: formatIdentity('gh', `${status.owner}/${status.name}`),
    status: status.status,
    headRevision: status.headRevision,
    lastCrawledAt: iso(status.lastCrawledAt),
    skills: status.skills,
    problems: viewer.isAdmin
      ? status.problems
      : status.problems.map((p) =>
          p.code === 'crawl-failed' ? { ...p, message: CRAWL_FAILED_PUBLICLY } : p,
        ),
    request: status.request
      ? { createdAt: status.request.createdAt.toISOString(), coalesced: status.request.coalesced }
      : null,
    defaultBranch: r?.defaultBranch ?? null,
    description: r?.description ?? null,
    stars: r?.stars ?? 0,
    license: r?.license ?? null,
    archived: r?.archived ?? false,
    gone: r ? r.goneAt !== null : false,
    lastCrawlOutcome: r?.lastCrawlOutcome ?? null,
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
