import { sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { uniqueBy } from './batches.js';
import { type SafetyVerdictRow, storeBlobs, storeCrawlVerdicts } from './blobs.js';
import { type CrawlOutcome, crawlReportExists, insertCrawlReport, type ReportEntry } from './crawls.js';
import {
  existingRepositoryIds,
  findRepositoryById,
  lockRepositories,
  lockRepository,
  type RepositoryCrawlRecord,
  type RepositoryMetadata,
  recordRepositoryCrawl,
} from './repositories.js';
import {
  countLiveRepositorySkills,
  markRepositorySkillsGone,
  repositorySkillStates,
  type SeenSkill,
  setRepositorySkillStars,
  touchUnchangedSkills,
  upsertCrawledSkills,
} from './skills/gh.js';

// What a repository job writes, across the table families (repositories, skills and their revisions,
// blobs and verdicts, crawl reports): one repository in one transaction of named steps, or the reports of
// many unchanged ones in one set-based statement. The SQL of each step is in its family's file.

/** Everything one repository job writes, applied in one transaction. */
export interface RepositoryIndexWrite {
  repositoryId: number;
  runId: number | null;
  /** The job's key in its run (crawlJobKey of the name it was queued under); its report is found by it. */
  queuedAs?: string | null;
  outcome: CrawlOutcome;
  /** The head this crawl saw (null when unknown, e.g. the repository could not be reached). */
  head?: { commit: string | null; branch: string | null } | null;
  /** GitHub's metadata with the ETag it came with (owner and name are the row's own). */
  metadata?: Omit<RepositoryMetadata, 'owner' | 'name'> & { etag: string | null };
  /** Skills seen at this head; null leaves the stored skills as they are (failed, unchanged). */
  skills: SeenSkill[] | null;
  /** The repository is gone upstream: every skill of it is marked gone. */
  repositoryGone?: boolean;
  warnings: ReportEntry[];
  errors: ReportEntry[];
  error?: string | null;
  bytesDownloaded: number;
  startedAt: Date;
}

export interface RepositoryIndexResult {
  /** False when the run already had a report for this repository (a redelivered job): nothing written. */
  written: boolean;
  skillsFound: number;
  skillsAdded: number;
  skillsUpdated: number;
  skillsRemoved: number;
}

/**
 * The repository row a job writes to is gone: a concurrent job of the same repository under another name
 * merged it into the row that stays (see moveRepository). Nothing was written; the job starts again from
 * its name, which now leads to the row that stayed.
 */
export class RepositoryVanishedError extends Error {
  override readonly name = 'RepositoryVanishedError';
  constructor(readonly repositoryId: number) {
    super(`repository ${repositoryId} no longer exists (merged into another row by a rename)`);
  }
}

/** What a redelivered job answers: its run holds a report already, nothing was written. */
const NOTHING_WRITTEN: RepositoryIndexResult = {
  written: false,
  skillsFound: 0,
  skillsAdded: 0,
  skillsUpdated: 0,
  skillsRemoved: 0,
};

/**
 * Writes one repository's crawl in ONE transaction: skills (upserted, their search column current with
 * the row), new revisions, blobs, safety verdicts, gone marks, the repository's head and metadata, and the
 * run's report. A worker killed before the commit leaves nothing behind; a redelivered job whose run
 * already holds a report writes nothing (the repository row lock serialises concurrent writers).
 */
export async function writeRepositoryIndex(
  db: Database,
  input: RepositoryIndexWrite,
): Promise<RepositoryIndexResult> {
  return db.transaction(async (tx) => {
    const id = input.repositoryId;
    // The lock first: a redelivered job beside the original waits here, then finds the original's report.
    await lockRepository(tx, id);
    // The job's report may be on another row than `id` already: its earlier attempt wrote it before a
    // merge handed it to the row that stayed.
    if (input.runId !== null && (await crawlReportExists(tx, input.runId, id, input.queuedAs)))
      return NOTHING_WRITTEN;
    const now = new Date();
    const repo = await findRepositoryById(tx, id);
    if (!repo) throw new RepositoryVanishedError(id);
    const target = {
      repositoryId: id,
      owner: repo.owner,
      container: repo.name,
      stars: input.metadata?.stars ?? repo.stars,
      at: now,
    };
    const seen = input.skills ?? [];
    // Without a skill list (unchanged, failed) only the live count matters: no need to read every row.
    const readsSkills = input.skills !== null || input.repositoryGone === true;
    const before = readsSkills ? await repositorySkillStates(tx, id) : [];
    const live = readsSkills
      ? before.filter((s) => s.goneAt === null).length
      : await countLiveRepositorySkills(tx, id);

    // Content before the rows that name it: blobs (in digest order, see storeBlobs), then verdicts.
    await storeBlobs(tx, contentBlobs(seen));
    await storeCrawlVerdicts(tx, contentVerdicts(seen));
    await upsertCrawledSkills(
      tx,
      target,
      seen.filter((s) => s.content),
    );
    await touchUnchangedSkills(
      tx,
      target,
      seen.filter((s) => !s.content).map((s) => s.identity),
    );
    // Gone marks after the upserts and touches, so they reach only the skills this crawl did not see.
    const keep = input.repositoryGone ? [] : seen.map((s) => s.identity);
    const removed = readsSkills ? (await markRepositorySkillsGone(tx, id, keep, now)).length : 0;
    if (input.metadata && !readsSkills) await setRepositorySkillStars(tx, id, target.stars);
    await recordRepositoryCrawl(tx, repo, crawlRecord(input), now);
    const counts = {
      // An unchanged repository still holds its skills: count them so run totals stay meaningful.
      skillsFound: input.skills !== null ? input.skills.length : input.outcome === 'unchanged' ? live : 0,
      ...tally(seen, before),
      skillsRemoved: removed,
    };
    // The report last: a run counts this repository done only with everything above committed beside it.
    if (input.runId !== null) await insertCrawlReport(tx, reportRow(input, input.runId, repo, counts, now));
    return { written: true, ...counts };
  });
}

/** The blobs of the skills whose content is new, each once. */
function contentBlobs(seen: SeenSkill[]) {
  return uniqueBy(
    seen.flatMap((s) => s.content?.blobs ?? []),
    (b) => b.sha256,
  );
}

/** The safety verdicts to cache for the skills whose content is new. */
function contentVerdicts(seen: SeenSkill[]): SafetyVerdictRow[] {
  return seen.flatMap((s) =>
    s.content?.verdict
      ? [
          {
            contentSha256: s.content.verdict.contentSha256,
            scannerVersion: s.content.verdict.scannerVersion,
            flags: s.content.flags,
          },
        ]
      : [],
  );
}

/** What the job records on the repository row. */
function crawlRecord(input: RepositoryIndexWrite): RepositoryCrawlRecord {
  return {
    outcome: input.outcome,
    error: input.error ?? null,
    gone: input.repositoryGone === true,
    // The problems an author sees: kept from the last crawl that read the tree (an unchanged crawl keeps them).
    problems:
      input.skills !== null || input.outcome === 'failed' || input.outcome === 'gone'
        ? [...input.errors, ...input.warnings]
        : undefined,
    head: input.head,
    metadata: input.metadata,
  };
}

/**
 * Skills added (new, or back from gone) and updated (a new revision of a live skill) by this crawl,
 * against the rows before it.
 */
function tally(
  seen: SeenSkill[],
  before: { identity: string; revision: string; goneAt: Date | null }[],
): { skillsAdded: number; skillsUpdated: number } {
  const beforeByIdentity = new Map(before.map((s) => [s.identity, s]));
  let skillsAdded = 0;
  let skillsUpdated = 0;
  for (const s of seen) {
    const previous = beforeByIdentity.get(s.identity);
    if (s.content) {
      if (!previous || previous.goneAt !== null) skillsAdded++;
      else if (previous.revision !== s.revision) skillsUpdated++;
    } else if (previous?.goneAt) skillsAdded++;
  }
  return { skillsAdded, skillsUpdated };
}

/** The run's report of this job. */
function reportRow(
  input: RepositoryIndexWrite,
  runId: number,
  repo: { headRevision: string | null },
  counts: Omit<RepositoryIndexResult, 'written'>,
  now: Date,
) {
  return {
    runId,
    repositoryId: input.repositoryId,
    queuedAs: input.queuedAs ?? null,
    outcome: input.outcome,
    headRevision: input.head?.commit ?? repo.headRevision,
    ...counts,
    warnings: input.warnings,
    errors: input.errors,
    bytesDownloaded: input.bytesDownloaded,
    durationMs: Math.max(0, now.getTime() - input.startedAt.getTime()),
    startedAt: input.startedAt,
    finishedAt: now,
  };
}

/** A repository job that found its repository unchanged (GitHub's metadata answered 304). */
export interface UnchangedReportWrite {
  repositoryId: number;
  runId: number | null;
  /** The job's key in its run (see RepositoryIndexWrite.queuedAs). */
  queuedAs?: string | null;
  /** The stored head, which the 304 says is still the head. */
  head: { commit: string | null; branch: string | null };
  warnings: ReportEntry[];
  errors: ReportEntry[];
  startedAt: Date;
}

/** One entry's result, in input order: false when its run already held a report (nothing written). */
export interface UnchangedReportResult {
  written: boolean;
  /** The repository row is gone (merged away by a rename): nothing was written (see RepositoryVanishedError). */
  vanished?: boolean;
  /** Live skills of the repository (what its report counts as found). */
  skillsFound: number;
}

/**
 * Writes the reports of many unchanged repositories in one transaction of three statements, whatever their
 * number: the rows are locked (in id order, so concurrent writers never deadlock) and read back, then one set-based
 * statement marks each repository crawled now and inserts the run's report with its live skill count -
 * what writeRepositoryIndex does for one unchanged repository, without a round trip per repository (one
 * statement over repositories, skills and crawl_reports, so it stays whole here rather than in the families). An
 * entry whose run already holds its job's report (a redelivered job) writes nothing, nor does one whose row
 * a rename merged away meanwhile (`vanished`).
 */
export async function writeUnchangedReports(
  db: Database,
  entries: UnchangedReportWrite[],
): Promise<UnchangedReportResult[]> {
  if (entries.length === 0) return [];
  const now = new Date();
  const ids = [...new Set(entries.map((e) => e.repositoryId))].sort((a, b) => a - b);
  return db.transaction(async (tx) => {
    await lockRepositories(tx, ids);
    // Locked rows stay; one missing was merged away by a rename while its job ran.
    const existing = new Set(await existingRepositoryIds(tx, ids));
    // The same job twice for the same run (a redelivered job beside the original): only the first.
    const firstOf = new Map<string, number>();
    const input = entries.flatMap((e, ord) => {
      if (!existing.has(e.repositoryId)) return [];
      const key = `${e.runId}:${e.queuedAs ?? `#${e.repositoryId}`}`;
      if (e.runId !== null && firstOf.has(key)) return [];
      firstOf.set(key, ord);
      return [
        {
          ord,
          repository_id: e.repositoryId,
          run_id: e.runId,
          queued_as: e.queuedAs ?? null,
          head_revision: e.head.commit,
          default_branch: e.head.branch,
          warnings: e.warnings,
          errors: e.errors,
          started_at: e.startedAt.toISOString(),
          duration_ms: Math.max(0, now.getTime() - e.startedAt.getTime()),
        },
      ];
    });
    const result = await tx.execute(sql`
      with input as (
        select * from jsonb_to_recordset(${JSON.stringify(input)}::jsonb) as i(
          ord int, repository_id bigint, run_id bigint, queued_as text, head_revision text,
          default_branch text, warnings jsonb, errors jsonb, started_at timestamptz, duration_ms int)
      ),
      fresh as (
        select i.*, (select count(*)::int from skills s
                     where s.repository_id = i.repository_id and s.gone_at is null) as live
        from input i
        where i.run_id is null or not exists (
          select 1 from crawl_reports c
          where c.run_id = i.run_id
            and (c.queued_as = i.queued_as
                 or (c.repository_id = i.repository_id and (c.queued_as is null or i.queued_as is null))))
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
        insert into crawl_reports (run_id, repository_id, queued_as, outcome, head_revision, skills_found,
                                   warnings, errors, bytes_downloaded, duration_ms, started_at, finished_at)
        select f.run_id, f.repository_id, f.queued_as, 'unchanged', f.head_revision, f.live, f.warnings,
               f.errors, 0, f.duration_ms, f.started_at, ${now}
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
    return entries.map((e, ord) => {
      if (!existing.has(e.repositoryId)) return { written: false, vanished: true, skillsFound: 0 };
      const live = written.get(ord);
      return live === undefined ? { written: false, skillsFound: 0 } : { written: true, skillsFound: live };
    });
  });
}
