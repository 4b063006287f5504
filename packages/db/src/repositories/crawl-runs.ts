import { and, desc, eq, getTableColumns, inArray, isNotNull, sql } from 'drizzle-orm';
import type { Executor } from '../client.js';
import { crawlReports, crawlRuns } from '../schema/crawls.js';
import { repositoryRedirects } from '../schema/indexing.js';
import { repositories } from '../schema/repositories.js';
import { repositoryNamed } from './repository-name.js';

export type CrawlRunKind =
  | 'repos'
  | 'repos-file'
  | 'code-search'
  | 'org'
  | 'schedule'
  | 'rebuild'
  /** An index request: POST /v1/index-requests, an on-demand gh: read or a webhook. */
  | 'request';
export type CrawlOutcome = 'indexed' | 'unchanged' | 'failed' | 'gone';

/** Starts a crawl run and returns its id; its total stays -1 (unknown) until discovery sets it. */
export async function createCrawlRun(
  db: Executor,
  input: { kind: CrawlRunKind; requestId?: string | null; repositoriesTotal?: number },
): Promise<number> {
  const [row] = await db
    .insert(crawlRuns)
    .values({
      kind: input.kind,
      requestId: input.requestId ?? null,
      repositoriesTotal: input.repositoriesTotal ?? -1,
    })
    .returning({ id: crawlRuns.id });
  return row!.id;
}

/** Sets how many repositories a run covers (discovery knows it once it has listed them). */
export async function setCrawlRunTotal(db: Executor, runId: number, total: number): Promise<void> {
  await db.update(crawlRuns).set({ repositoriesTotal: total }).where(eq(crawlRuns.id, runId));
}

/** Marks a run finished (or failed) with its totals. */
export async function finishCrawlRun(
  db: Executor,
  runId: number,
  status: 'finished' | 'failed',
  totals: Record<string, number> = {},
): Promise<void> {
  await db
    .update(crawlRuns)
    .set({ status, finishedAt: new Date(), totals })
    .where(and(eq(crawlRuns.id, runId), eq(crawlRuns.status, 'running')));
}

/** A run with its progress so far. */
export interface CrawlRunProgress {
  id: number;
  kind: string;
  status: string;
  startedAt: Date;
  finishedAt: Date | null;
  repositoriesTotal: number;
  repositoriesDone: number;
  skillsFound: number;
  skillsAdded: number;
  skillsUpdated: number;
  skillsRemoved: number;
  bytesDownloaded: number;
  errors: number;
  outcomes: Record<CrawlOutcome, number>;
}

/** Progress of one run, from its reports (null when the run does not exist). */
export async function crawlRunProgress(db: Executor, runId: number): Promise<CrawlRunProgress | null> {
  const [run] = await db.select().from(crawlRuns).where(eq(crawlRuns.id, runId));
  if (!run) return null;
  const rows = await db
    .select({
      outcome: crawlReports.outcome,
      repositories: sql<number>`count(*)::int`,
      skillsFound: sql<number>`coalesce(sum(${crawlReports.skillsFound}), 0)::int`,
      skillsAdded: sql<number>`coalesce(sum(${crawlReports.skillsAdded}), 0)::int`,
      skillsUpdated: sql<number>`coalesce(sum(${crawlReports.skillsUpdated}), 0)::int`,
      skillsRemoved: sql<number>`coalesce(sum(${crawlReports.skillsRemoved}), 0)::int`,
      bytes: sql<number>`coalesce(sum(${crawlReports.bytesDownloaded}), 0)::bigint`,
      errors: sql<number>`coalesce(sum(jsonb_array_length(${crawlReports.errors})), 0)::int`,
    })
    .from(crawlReports)
    .where(eq(crawlReports.runId, runId))
    .groupBy(crawlReports.outcome);
  const outcomes: Record<CrawlOutcome, number> = { indexed: 0, unchanged: 0, failed: 0, gone: 0 };
  const progress: CrawlRunProgress = {
    id: run.id,
    kind: run.kind,
    status: run.status,
    startedAt: run.startedAt,
    finishedAt: run.finishedAt,
    repositoriesTotal: run.repositoriesTotal,
    repositoriesDone: 0,
    skillsFound: 0,
    skillsAdded: 0,
    skillsUpdated: 0,
    skillsRemoved: 0,
    bytesDownloaded: 0,
    errors: 0,
    outcomes,
  };
  for (const row of rows) {
    outcomes[row.outcome as CrawlOutcome] = row.repositories;
    progress.repositoriesDone += row.repositories;
    progress.skillsFound += row.skillsFound;
    progress.skillsAdded += row.skillsAdded;
    progress.skillsUpdated += row.skillsUpdated;
    progress.skillsRemoved += row.skillsRemoved;
    progress.bytesDownloaded += Number(row.bytes);
    // A failed repository counts as an error even when its report lists none.
    progress.errors += row.outcome === 'failed' ? Math.max(1, row.errors) : row.errors;
  }
  return progress;
}

/** The most recent runs, newest first. */
export async function recentCrawlRuns(db: Executor, limit = 5) {
  return db.select().from(crawlRuns).orderBy(desc(crawlRuns.id)).limit(limit);
}

/** Repositories whose last crawl failed or found them gone, most recent first. */
export async function failedRepositories(db: Executor, limit = 20) {
  return db
    .select({
      owner: repositories.owner,
      name: repositories.name,
      lastCrawledAt: repositories.lastCrawledAt,
      error: repositories.lastCrawlError,
    })
    .from(repositories)
    .where(
      and(inArray(repositories.lastCrawlOutcome, ['failed', 'gone']), isNotNull(repositories.lastCrawledAt)),
    )
    .orderBy(desc(repositories.lastCrawledAt))
    .limit(limit);
}

/**
 * The repository row for owner/name (case-insensitive), created when missing. With `started`, it is also
 * marked as being crawled now (its status turns from `queued` to `crawling`), in the same statement.
 */
export async function ensureRepository(
  db: Executor,
  owner: string,
  name: string,
  options: { started?: boolean } = {},
) {
  const [existing] = options.started
    ? await db
        .update(repositories)
        .set({ crawlStartedAt: new Date() })
        .where(repositoryNamed(owner, name))
        .returning()
    : await db.select().from(repositories).where(repositoryNamed(owner, name));
  if (existing) return existing;
  const created = await db
    .insert(repositories)
    .values({ owner, name, ...(options.started ? { crawlStartedAt: new Date() } : {}) })
    .onConflictDoNothing()
    .returning();
  // A repository lives at this name again: a redirect left by an earlier rename away from it no longer applies.
  if (created.length > 0) {
    await db
      .delete(repositoryRedirects)
      .where(
        and(
          sql`lower(${repositoryRedirects.oldOwner}) = lower(${owner})`,
          sql`lower(${repositoryRedirects.oldName}) = lower(${name})`,
        ),
      );
  }
  const [row] =
    created.length > 0 ? created : await db.select().from(repositories).where(repositoryNamed(owner, name));
  return row!;
}

/**
 * What a repository job opens with, in one statement for a known repository: its row, marked as being
 * crawled now, and whether `runId` already holds its report (a redelivered job). An unknown repository is
 * created (`ensureRepository`), which has no report yet.
 */
export async function startRepositoryJob(
  db: Executor,
  owner: string,
  name: string,
  runId: number | null,
): Promise<{ repository: Awaited<ReturnType<typeof ensureRepository>>; reported: boolean }> {
  const reported =
    runId === null
      ? sql<boolean>`false`
      : sql<boolean>`exists (select 1 from ${crawlReports} where ${crawlReports.runId} = ${runId} and ${crawlReports.repositoryId} = ${repositories.id})`;
  const [row] = await db
    .update(repositories)
    .set({ crawlStartedAt: new Date() })
    .where(repositoryNamed(owner, name))
    .returning({ ...getTableColumns(repositories), reported });
  if (row) {
    const { reported: already, ...repository } = row;
    return { repository, reported: already };
  }
  const repository = await ensureRepository(db, owner, name, { started: true });
  return {
    repository,
    reported: runId !== null && (await crawlReportExists(db, runId, repository.id)),
  };
}

/** Every known repository as `owner/name` (what a rebuild re-crawls). */
export async function allRepositoryNames(db: Executor): Promise<string[]> {
  const rows = await db.select({ owner: repositories.owner, name: repositories.name }).from(repositories);
  return rows.map((r) => `${r.owner}/${r.name}`).sort();
}

/** Whether a run already holds a report for this repository (a redelivered job has nothing left to do). */
export async function crawlReportExists(db: Executor, runId: number, repositoryId: number): Promise<boolean> {
  const rows = await db
    .select({ id: crawlReports.id })
    .from(crawlReports)
    .where(and(eq(crawlReports.runId, runId), eq(crawlReports.repositoryId, repositoryId)))
    .limit(1);
  return rows.length > 0;
}

/** Reports of a run (for the CLI and tests). */
export async function crawlReportsOfRun(db: Executor, runId: number) {
  return db
    .select({
      report: crawlReports,
      owner: repositories.owner,
      name: repositories.name,
    })
    .from(crawlReports)
    .innerJoin(repositories, eq(repositories.id, crawlReports.repositoryId))
    .where(eq(crawlReports.runId, runId));
}

/** Runs still marked running whose every repository has a report: finish them (idempotent). */
export async function finishCompletedRuns(db: Executor, runIds: number[]): Promise<number[]> {
  if (runIds.length === 0) return [];
  const finished: number[] = [];
  const runs = await db.select().from(crawlRuns).where(inArray(crawlRuns.id, runIds));
  for (const run of runs) {
    if (run.status !== 'running' || run.repositoriesTotal < 0) continue;
    // One indexed count per finished job; the full progress only once the run is complete (it reads every
    // report of the run, which per job made a run of n repositories cost n^2).
    const [done] = await db
      .select({ n: sql<number>`count(*)::int` })
      .from(crawlReports)
      .where(eq(crawlReports.runId, run.id));
    if ((done?.n ?? 0) < run.repositoriesTotal) continue;
    const progress = await crawlRunProgress(db, run.id);
    if (progress && progress.repositoriesDone >= run.repositoriesTotal && run.repositoriesTotal >= 0) {
      await finishCrawlRun(db, run.id, 'finished', {
        repositories: progress.repositoriesDone,
        skills: progress.skillsFound,
        errors: progress.errors,
        bytes: progress.bytesDownloaded,
      });
      finished.push(run.id);
    }
  }
  return finished;
}

/**
 * After a crawl run: fresh planner statistics and GIN pending lists merged into their indexes, so search
 * does not wait for autovacuum (which an embedded PGlite database never runs, and a server may run late).
 * Stale statistics make the planner misjudge how common a word is; each query scans the pending entries
 * (up to 4 MB per index) of every GIN index it uses.
 */
export async function refreshSearchStatistics(db: Executor): Promise<void> {
  await db.execute(
    sql`select gin_clean_pending_list(i.indexrelid::regclass)
        from pg_index i join pg_class c on c.oid = i.indexrelid join pg_am a on a.oid = c.relam
        where a.amname = 'gin' and i.indrelid in ('skills'::regclass, 'skill_folders'::regclass)`,
  );
  await db.execute(sql`analyze skills, skill_folders`);
}

/** Whether a run changed the index (skills added, updated or removed), e.g. to skip refreshing statistics. */
export async function crawlRunChangedIndex(db: Executor, runId: number): Promise<boolean> {
  const [row] = await db
    .select({
      n: sql<number>`coalesce(sum(${crawlReports.skillsAdded} + ${crawlReports.skillsUpdated} + ${crawlReports.skillsRemoved}), 0)::int`,
    })
    .from(crawlReports)
    .where(eq(crawlReports.runId, runId));
  return (row?.n ?? 0) > 0;
}
