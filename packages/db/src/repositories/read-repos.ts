import { and, desc, eq, isNull, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { crawlReports, crawlRuns } from '../schema/crawls.js';
import { repositories } from '../schema/repositories.js';
import { skills } from '../schema/skills.js';
import { type ReadScope, visibleTo } from './read-scope.js';
import { repositoryNamed } from './repository-name.js';

/** A repository (case-insensitive owner/name), its latest crawl report and its current skill count. */
export async function findRepositoryWithReport(db: Database, owner: string, name: string) {
  const [repo] = await db.select().from(repositories).where(repositoryNamed(owner, name)).limit(1);
  if (!repo) return undefined;
  const [report] = await db
    .select()
    .from(crawlReports)
    .where(eq(crawlReports.repositoryId, repo.id))
    .orderBy(desc(crawlReports.startedAt), desc(crawlReports.id))
    .limit(1);
  const [count] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(skills)
    .where(and(eq(skills.repositoryId, repo.id), isNull(skills.goneAt)));
  return { repo, report, skills: count?.n ?? 0 };
}

/** Corpus size as the scope sees it (private rows it may not read are not counted) and the last crawl. */
export async function corpusStats(db: Database, scope: ReadScope) {
  const [counts] = await db
    .select({
      skills: sql<number>`count(*) filter (where ${skills.goneAt} is null)::int`,
      gone: sql<number>`count(*) filter (where ${skills.goneAt} is not null)::int`,
      repositories: sql<number>`count(distinct ${skills.repositoryId}) filter (where ${skills.goneAt} is null)::int`,
      collections: sql<number>`count(distinct ${skills.collectionId}) filter (where ${skills.goneAt} is null)::int`,
    })
    .from(skills)
    .where(visibleTo(scope, skills.visibility, skills.owner));
  const [lastCrawl] = await db
    .select()
    .from(crawlRuns)
    .orderBy(desc(crawlRuns.startedAt), desc(crawlRuns.id))
    .limit(1);
  return {
    skills: counts?.skills ?? 0,
    gone: counts?.gone ?? 0,
    repositories: counts?.repositories ?? 0,
    collections: counts?.collections ?? 0,
    lastCrawl: lastCrawl ?? null,
  };
}
