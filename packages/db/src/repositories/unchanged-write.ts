import { sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import type { ReportEntry } from './index-write.js';

/** A repository job that found its repository unchanged (GitHub's metadata answered 304). */
export interface UnchangedReportWrite {
  repositoryId: number;
  runId: number | null;
  /** The stored head, which the 304 says is still the head. */
  head: { commit: string | null; branch: string | null };
  warnings: ReportEntry[];
  errors: ReportEntry[];
  startedAt: Date;
}

/** One entry's result, in input order: false when its run already held a report (nothing written). */
export interface UnchangedReportResult {
  written: boolean;
  /** Live skills of the repository (what its report counts as found). */
  skillsFound: number;
}

/**
 * Writes the reports of many unchanged repositories in one transaction of two statements, whatever their
 * number: the rows are locked (in id order, so concurrent writers never deadlock), then one set-based
 * statement marks each repository crawled now and inserts the run's report with its live skill count -
 * what writeRepositoryIndex does for one unchanged repository, without a round trip per repository. An
 * entry whose run already holds a report for its repository (a redelivered job) writes nothing.
 */
export async function writeUnchangedReports(
  db: Database,
  entries: UnchangedReportWrite[],
): Promise<UnchangedReportResult[]> {
  if (entries.length === 0) return [];
  const now = new Date();
  // The same repository twice for the same run (a redelivered job beside the original): only the first.
  const firstOf = new Map<string, number>();
  const input = entries.flatMap((e, ord) => {
    const key = `${e.runId}:${e.repositoryId}`;
    if (e.runId !== null && firstOf.has(key)) return [];
    firstOf.set(key, ord);
    return [
      {
        ord,
        repository_id: e.repositoryId,
        run_id: e.runId,
        head_revision: e.head.commit,
        default_branch: e.head.branch,
        warnings: e.warnings,
        errors: e.errors,
        started_at: e.startedAt.toISOString(),
        duration_ms: Math.max(0, now.getTime() - e.startedAt.getTime()),
      },
    ];
  });
  const ids = [...new Set(entries.map((e) => e.repositoryId))].sort((a, b) => a - b);
  return db.transaction(async (tx) => {
    await tx.execute(
      sql`select id from repositories where id = any(${`{${ids.join(',')}}`}::bigint[]) order by id for update`,
    );
    const result = await tx.execute(sql`
      with input as (
        select * from jsonb_to_recordset(${JSON.stringify(input)}::jsonb) as i(
          ord int, repository_id bigint, run_id bigint, head_revision text, default_branch text,
          warnings jsonb, errors jsonb, started_at timestamptz, duration_ms int)
      ),
      fresh as (
        select i.*, (select count(*)::int from skills s
                     where s.repository_id = i.repository_id and s.gone_at is null) as live
        from input i
        where i.run_id is null or not exists (
          select 1 from crawl_reports c where c.run_id = i.run_id and c.repository_id = i.repository_id)
      ),
      marked as (
        update repositories r
        set last_crawled_at = ${now}, last_crawl_outcome = 'unchanged', last_crawl_error = null,
            updated_at = ${now}, gone_at = null, head_revision = f.head_revision,
            default_branch = coalesce(f.default_branch, r.default_branch)
        from fresh f where r.id = f.repository_id
        returning r.id
      ),
      reported as (
        insert into crawl_reports (run_id, repository_id, outcome, head_revision, skills_found, warnings,
                                   errors, bytes_downloaded, duration_ms, started_at, finished_at)
        select f.run_id, f.repository_id, 'unchanged', f.head_revision, f.live, f.warnings, f.errors, 0,
               f.duration_ms, f.started_at, ${now}
        from fresh f where f.run_id is not null
        returning id
      )
      select ord, live from fresh`);
    const written = new Map(
      (result as unknown as { rows: { ord: number; live: number }[] }).rows.map((r) => [
        Number(r.ord),
        Number(r.live),
      ]),
    );
    return entries.map((_, ord) => {
      const live = written.get(ord);
      return live === undefined ? { written: false, skillsFound: 0 } : { written: true, skillsFound: live };
    });
  });
}
