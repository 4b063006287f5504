import { and, count, desc, eq, inArray, isNotNull, type SQL, sql } from 'drizzle-orm';
import type { Executor } from '../client.js';
import { crawlReports, crawlRuns } from '../schema/crawls.js';
import { indexRequests } from '../schema/indexing.js';
import { repositories } from '../schema/repositories.js';

// Table family `crawl_runs` and `crawl_reports` (src/schema/crawls.ts): one row per crawl, one report per
// repository per run, and the progress and totals read from them.

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

/** A problem in a crawl report (and in the repository's problems): the file, a stable code, the reason. */
export interface ReportEntry {
  path: string;
  code: string;
  message: string;
  /** 1-based line in the file, when known (YAML that does not parse). */
  line?: number;
}

/** Starts a crawl run and returns its id; its total stays -1 (unknown) until discovery sets it. */
export async function createCrawlRun(
  db: Executor,
  input: {
    kind: CrawlRunKind;
    requestId?: string | null;
    repositoriesTotal?: number;
    /** The process lock key of the process whose in-process queue runs its jobs (see ProcessLock). */
    ownerLock?: number;
  },
): Promise<number> {
  const [row] = await db
    .insert(crawlRuns)
    .values({
      kind: input.kind,
      requestId: input.requestId ?? null,
      repositoriesTotal: input.repositoriesTotal ?? -1,
      ownerLock: input.ownerLock ?? null,
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

/** What ending a run as interrupted writes: failed now, `interrupted: 1` added to its totals. */
function interrupted() {
  return {
    status: 'failed',
    finishedAt: new Date(),
    totals: sql`${crawlRuns.totals} || '{"interrupted": 1}'::jsonb`,
  };
}

/**
 * Ends as failed (totals `interrupted: 1`) the runs still running among `runIds`, or every running run when
 * none are named: runs whose jobs lived in a process's memory (the in-process queue) and went with it, which
 * no job will ever complete. Returns the runs ended.
 */
export async function failInterruptedRuns(db: Executor, runIds?: number[]): Promise<number[]> {
  if (runIds && runIds.length === 0) return [];
  const rows = await db
    .update(crawlRuns)
    .set(interrupted())
    .where(and(eq(crawlRuns.status, 'running'), ...(runIds ? [inArray(crawlRuns.id, runIds)] : [])))
    .returning({ id: crawlRuns.id });
  return rows.map((r) => r.id);
}

/**
 * Ends as failed (totals `interrupted: 1`) the running runs whose owning process is gone (`isAlive`: see
 * ProcessLock): their jobs lived in that process's in-process queue. Runs with no owner (their jobs are in
 * Redis, which outlives any process) are left alone. Returns the runs ended.
 */
export async function failOrphanedRuns(
  db: Executor,
  isAlive: (ownerLock: number) => Promise<boolean>,
): Promise<number[]> {
  const owners = await db
    .selectDistinct({ ownerLock: crawlRuns.ownerLock })
    .from(crawlRuns)
    .where(and(eq(crawlRuns.status, 'running'), isNotNull(crawlRuns.ownerLock)));
  const ended: number[] = [];
  for (const { ownerLock } of owners) {
    if (ownerLock === null || (await isAlive(ownerLock))) continue;
    const rows = await db
      .update(crawlRuns)
      .set(interrupted())
      .where(and(eq(crawlRuns.status, 'running'), eq(crawlRuns.ownerLock, ownerLock)))
      .returning({ id: crawlRuns.id });
    ended.push(...rows.map((r) => r.id));
  }
  return ended;
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

/** The run started last (the crawl-status page and the corpus stats show it), if any. */
export async function latestCrawlRun(db: Executor) {
  const [lastRun] = await db
    .select()
    .from(crawlRuns)
    .orderBy(desc(crawlRuns.startedAt), desc(crawlRuns.id))
    .limit(1);
  return lastRun;
}

/** A repository job's key in its run: the `owner/name` it was queued under (job ids fold case too). */
export function crawlJobKey(owner: string, name: string): string {
  return `${owner}/${name}`.toLowerCase();
}

/**
 * The condition "this report is the job's": a report keyed `queuedAs`, or one written without a key (by
 * an older release, or a caller that names no job) for the same repository row. Without `queuedAs`, any
 * report of the row.
 */
export function reportOfJob(repositoryId: SQL | number, queuedAs: SQL | string | null | undefined): SQL {
  const sameRow = sql`${crawlReports.repositoryId} = ${repositoryId}`;
  if (queuedAs === null || queuedAs === undefined) return sameRow;
  return sql`(${crawlReports.queuedAs} = ${queuedAs} or (${crawlReports.queuedAs} is null and ${sameRow}))`;
}

/**
 * Whether a run already holds the report of this job (a redelivered job has nothing left to do): the job
 * queued as `queuedAs` (crawlJobKey), else any report of the repository row.
 */
export async function crawlReportExists(
  db: Executor,
  runId: number,
  repositoryId: number,
  queuedAs?: string | null,
): Promise<boolean> {
  const rows = await db
    .select({ id: crawlReports.id })
    .from(crawlReports)
    .where(and(eq(crawlReports.runId, runId), reportOfJob(repositoryId, queuedAs)))
    .limit(1);
  return rows.length > 0;
}

/**
 * Hands the reports of a repository row that is about to be deleted (it gave way in a merge) to the row
 * that stays: runs keep their counts (a run waits for one report per job) and the job counter never falls.
 */
export async function moveCrawlReports(tx: Executor, fromId: number, toId: number): Promise<void> {
  await tx.update(crawlReports).set({ repositoryId: toId }).where(eq(crawlReports.repositoryId, fromId));
}

/** The latest report of a repository, if it was ever crawled. */
export async function latestCrawlReport(db: Executor, repositoryId: number) {
  const [report] = await db
    .select()
    .from(crawlReports)
    .where(eq(crawlReports.repositoryId, repositoryId))
    .orderBy(desc(crawlReports.startedAt), desc(crawlReports.id))
    .limit(1);
  return report;
}

/**
 * Inserts a repository job's report into its run: the last write of the job's transaction, so a run counts
 * a repository as done only once everything the job found is committed with it.
 */
export async function insertCrawlReport(tx: Executor, row: typeof crawlReports.$inferInsert): Promise<void> {
  await tx.insert(crawlReports).values(row);
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

/** Repository jobs ever recorded, by outcome (indexed, unchanged, failed, gone): the crawl job counter's source. */
export async function crawlOutcomeTotals(db: Executor): Promise<Record<string, number>> {
  const rows = await db
    .select({ outcome: crawlReports.outcome, n: count() })
    .from(crawlReports)
    .groupBy(crawlReports.outcome);
  return Object.fromEntries(rows.map((r) => [r.outcome, Number(r.n)]));
}

/**
 * Deletes finished index-request runs older than `ttlSeconds` that hold no report and no open request
 * (what forgetting unfound repositories leaves behind; their reports went with the repository rows).
 */
export async function deleteEmptyRequestRuns(tx: Executor, ttlSeconds: number): Promise<void> {
  const ttl = sql`(${ttlSeconds}::int * interval '1 second')`;
  await tx.execute(sql`
        delete from ${crawlRuns} r
        where r.kind = 'request' and r.status <> 'running' and r.finished_at < now() - ${ttl}
          and not exists (select 1 from crawl_reports c where c.run_id = r.id)
          and not exists (select 1 from ${indexRequests} q where q.run_id = r.id and q.state = 'open')`);
}
