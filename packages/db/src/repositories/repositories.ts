import {
  and,
  asc,
  count,
  desc,
  eq,
  getTableColumns,
  inArray,
  isNotNull,
  isNull,
  min,
  ne,
  or,
  type SQL,
  sql,
} from 'drizzle-orm';
import type { Database, Executor } from '../client.js';
import { crawlReports } from '../schema/crawls.js';
import { repositoryRedirects } from '../schema/indexing.js';
import { type RepositoryProblem, repositories } from '../schema/repositories.js';
import { skills } from '../schema/skills.js';
import {
  type CrawlOutcome,
  crawlJobKey,
  crawlReportExists,
  latestCrawlReport,
  moveCrawlReports,
  reportOfJob,
} from './crawls.js';
import { deleteRedirectFrom, findRepositoryRedirect, openIndexRequest } from './indexing.js';
import { qualified } from './qualified.js';
import { countLiveRepositorySkills, listedRepositorySkillIdentities } from './skills/gh.js';

// Table family `repositories` (src/schema/repositories.ts): the GitHub repositories the crawler knows, with
// what it last saw of each. Every read and write of the row is here; the re-crawl schedule's queries are in
// repository-schedule.ts, and the transactions that also move skills and redirects (renames, transfers,
// disappearance) in repository-lifecycle.ts.

export type RepositoryRow = typeof repositories.$inferSelect;

/** SPEC 2.6 index status of a repository. */
export type IndexStatus = 'queued' | 'crawling' | 'indexed' | 'failed' | 'not-indexed';

/** The repository metadata the index keeps (a subset of GitHub's full-repository). */
export interface RepositoryMetadata {
  owner: string;
  name: string;
  defaultBranch: string | null;
  description: string | null;
  stars: number;
  license: string | null;
  archived: boolean;
  pushedAt: Date | null;
  topics: string[];
  /** GitHub's id of the repository (a rename or transfer keeps it). */
  githubId?: number | null;
}

/**
 * The repository named owner/name. GitHub names are case-insensitive; this matches the
 * `repositories_full_name_key` index on (lower(owner), lower(name)).
 */
export function repositoryNamed(owner: string, name: string): SQL {
  return and(
    sql`lower(${repositories.owner}) = lower(${owner})`,
    sql`lower(${repositories.name}) = lower(${name})`,
  ) as SQL;
}

/** Locks one repository row until the transaction ends: the writers of one repository take turns. */
export async function lockRepository(tx: Executor, repositoryId: number): Promise<void> {
  await tx.execute(sql`select id from repositories where id = ${repositoryId} for update`);
}

/** Locks many repository rows in id order, so two writers of overlapping sets never deadlock. */
export async function lockRepositories(tx: Executor, sortedIds: number[]): Promise<void> {
  await tx.execute(
    sql`select id from repositories where id = any(${`{${sortedIds.join(',')}}`}::bigint[]) order by id for update`,
  );
}

/** The repository row owner/name, locked until the transaction ends (a move or disappearance rewrites it). */
export async function lockRepositoryNamed(
  tx: Executor,
  owner: string,
  name: string,
): Promise<RepositoryRow | undefined> {
  const [repo] = await tx.select().from(repositories).where(repositoryNamed(owner, name)).for('update');
  return repo;
}

/** Which of `ids` are repository rows still. */
export async function existingRepositoryIds(db: Executor, ids: number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .select({ id: repositories.id })
    .from(repositories)
    .where(inArray(repositories.id, ids));
  return rows.map((r) => r.id);
}

/** A repository row by id. */
export async function findRepositoryById(
  db: Executor,
  repositoryId: number,
): Promise<RepositoryRow | undefined> {
  const [repo] = await db.select().from(repositories).where(eq(repositories.id, repositoryId));
  return repo;
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
  if (created.length > 0) await deleteRedirectFrom(db, owner, name);
  const [row] =
    created.length > 0 ? created : await db.select().from(repositories).where(repositoryNamed(owner, name));
  return row!;
}

/**
 * What a repository job opens with: the row the job's name leads to, marked as being crawled now, and
 * whether `runId` already holds this job's report (a redelivered job; reports are keyed by the name the job
 * was queued under, see crawlJobKey). The name leads to the row of that name, else to the repository a
 * rename or transfer took away from it (`redirected`: GitHub is asked about the old name itself, since a
 * repository made there since is another one), else to a new row.
 */
export async function startRepositoryJob(
  db: Executor,
  owner: string,
  name: string,
  runId: number | null,
): Promise<{
  repository: Awaited<ReturnType<typeof ensureRepository>>;
  reported: boolean;
  redirected: boolean;
}> {
  const queuedAs = crawlJobKey(owner, name);
  const reported =
    runId === null
      ? sql<boolean>`false`
      : sql<boolean>`exists (select 1 from ${crawlReports} where ${crawlReports.runId} = ${runId} and ${reportOfJob(qualified(repositories.id), queuedAs)})`;
  const start = async (where: SQL) => {
    const [row] = await db
      .update(repositories)
      .set({ crawlStartedAt: new Date() })
      .where(where)
      .returning({ ...getTableColumns(repositories), reported });
    if (!row) return undefined;
    const { reported: already, ...repository } = row;
    return { repository, reported: already };
  };
  const named = await start(repositoryNamed(owner, name));
  if (named) return { ...named, redirected: false };
  const moved = await findRepositoryRedirect(db, owner, name);
  const renamed = moved ? await start(repositoryNamed(moved.owner, moved.name)) : undefined;
  if (renamed) return { ...renamed, redirected: true };
  const repository = await ensureRepository(db, owner, name, { started: true });
  return {
    repository,
    reported: runId !== null && (await crawlReportExists(db, runId, repository.id, queuedAs)),
    redirected: false,
  };
}

/** The row a job queued as owner/name reports on (see startRepositoryJob), without marking it crawled. */
export async function jobRepository(db: Executor, owner: string, name: string): Promise<RepositoryRow> {
  const current = await currentRepositoryName(db, owner, name);
  return ensureRepository(db, current.owner, current.name);
}

/** Every known repository as `owner/name` (what a rebuild re-crawls). */
export async function allRepositoryNames(db: Executor): Promise<string[]> {
  const rows = await db.select({ owner: repositories.owner, name: repositories.name }).from(repositories);
  return rows.map((r) => `${r.owner}/${r.name}`).sort();
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

/** How many repositories are known, due now and failed, and the earliest scheduled probe (crawl status). */
export async function repositoryCrawlTotals(db: Executor, now: Date) {
  const [totals] = await db
    .select({
      repositories: count(),
      due: sql<number>`count(*) filter (where ${repositories.nextCrawlAt} <= ${now.toISOString()})`.mapWith(
        Number,
      ),
      failuresTotal: sql<number>`count(*) filter (where ${repositories.lastCrawlOutcome} = 'failed')`.mapWith(
        Number,
      ),
      nextDueAt: min(repositories.nextCrawlAt),
    })
    .from(repositories);
  return totals;
}

/** Repositories whose last crawl failed, most recent first (at most `limit`). */
export async function recentCrawlFailures(
  db: Executor,
  limit: number,
): Promise<{ owner: string; name: string; error: string | null; at: Date | null }[]> {
  return db
    .select({
      owner: repositories.owner,
      name: repositories.name,
      error: repositories.lastCrawlError,
      at: repositories.lastCrawledAt,
    })
    .from(repositories)
    .where(eq(repositories.lastCrawlOutcome, 'failed'))
    .orderBy(sql`${repositories.lastCrawledAt} desc nulls last`, asc(repositories.id))
    .limit(limit);
}

/** A repository (case-insensitive owner/name), its latest crawl report and its current skill count. */
export async function findRepositoryWithReport(db: Database, owner: string, name: string) {
  const [repo] = await db.select().from(repositories).where(repositoryNamed(owner, name)).limit(1);
  if (!repo) return undefined;
  const report = await latestCrawlReport(db, repo.id);
  return { repo, report, skills: await countLiveRepositorySkills(db, repo.id) };
}

/** What one repository job records on its repository row. */
export interface RepositoryCrawlRecord {
  outcome: CrawlOutcome;
  error: string | null;
  /** The repository is gone upstream. */
  gone: boolean;
  /** The problems an author sees, when this crawl read the tree (or failed); undefined keeps the stored ones. */
  problems?: RepositoryProblem[];
  head?: { commit: string | null; branch: string | null } | null;
  metadata?: Omit<RepositoryMetadata, 'owner' | 'name'> & { etag: string | null };
}

/**
 * Records a crawl on the repository row: when, how it ended, the head and branch it saw, GitHub's metadata
 * with its ETag (the next crawl's conditional request), and the problems an author sees.
 */
export async function recordRepositoryCrawl(
  tx: Executor,
  repo: Pick<RepositoryRow, 'id' | 'goneAt'>,
  crawl: RepositoryCrawlRecord,
  now: Date,
): Promise<void> {
  const repoUpdate: Partial<typeof repositories.$inferInsert> = {
    lastCrawledAt: now,
    lastCrawlOutcome: crawl.outcome,
    lastCrawlError: crawl.error,
    updatedAt: now,
    goneAt: crawl.gone ? (repo.goneAt ?? now) : null,
  };
  if (crawl.problems) repoUpdate.problems = crawl.problems;
  if (crawl.head) {
    repoUpdate.headRevision = crawl.head.commit;
    if (crawl.head.branch) repoUpdate.defaultBranch = crawl.head.branch;
  }
  if (crawl.metadata) {
    const m = crawl.metadata;
    Object.assign(repoUpdate, {
      metadataEtag: m.etag,
      description: m.description,
      stars: m.stars,
      license: m.license,
      archived: m.archived,
      pushedAt: m.pushedAt,
      topics: m.topics,
      ...(m.githubId ? { githubId: m.githubId } : {}),
    });
    if (m.defaultBranch && !crawl.head?.branch) repoUpdate.defaultBranch = m.defaultBranch;
  }
  await tx.update(repositories).set(repoUpdate).where(eq(repositories.id, repo.id));
}

/**
 * Records that a repository was deleted or made private upstream: gone (since the first time), why, and
 * without its ETag, so a later crawl (e.g. after `publicized`) reads it afresh.
 */
export async function recordRepositoryUnavailable(
  tx: Executor,
  repo: Pick<RepositoryRow, 'id' | 'goneAt'>,
  problem: RepositoryProblem,
  now: Date,
): Promise<void> {
  await tx
    .update(repositories)
    .set({
      goneAt: repo.goneAt ?? now,
      lastCrawlOutcome: 'gone',
      lastCrawlError: problem.message,
      problems: [problem],
      metadataEtag: null,
      updatedAt: now,
    })
    .where(eq(repositories.id, repo.id));
}

/** The id of another repository row than `exceptId` at owner/name (one crawled before a move was noticed). */
export async function findOtherRepositoryNamed(
  tx: Executor,
  owner: string,
  name: string,
  exceptId: number,
): Promise<number | undefined> {
  const [target] = await tx
    .select({ id: repositories.id })
    .from(repositories)
    .where(and(repositoryNamed(owner, name), ne(repositories.id, exceptId)));
  return target?.id;
}

/** Another repository row than `exceptId` that holds GitHub's id (one repository known under two names). */
export async function findOtherRepositoryWithGithubId(
  db: Executor,
  githubId: number,
  exceptId: number,
): Promise<{ id: number; owner: string; name: string } | undefined> {
  const [other] = await db
    .select({ id: repositories.id, owner: repositories.owner, name: repositories.name })
    .from(repositories)
    .where(and(eq(repositories.githubId, githubId), ne(repositories.id, exceptId)))
    .orderBy(asc(repositories.id))
    .limit(1);
  return other;
}

/**
 * The ids of the rows a move of `from` to `to` may rewrite or delete: the rows at either name and every
 * row holding GitHub's id, in id order (what lockRepositories takes).
 */
export async function repositoriesOfMove(
  tx: Executor,
  from: { owner: string; name: string },
  to: { owner: string; name: string; githubId?: number | null },
): Promise<number[]> {
  const rows = await tx
    .select({ id: repositories.id })
    .from(repositories)
    .where(
      or(
        repositoryNamed(from.owner, from.name),
        repositoryNamed(to.owner, to.name),
        ...(to.githubId ? [eq(repositories.githubId, to.githubId)] : []),
      ),
    )
    .orderBy(asc(repositories.id));
  return rows.map((r) => r.id);
}

/**
 * Deletes a repository row that gives way to `survivorId` in a merge: its crawl reports and the redirects
 * to it go to the survivor first (runs keep their counts, old names keep leading somewhere); its skills go
 * with it by cascade.
 */
export async function deleteRepositoryRow(
  tx: Executor,
  repositoryId: number,
  survivorId: number,
): Promise<void> {
  await moveCrawlReports(tx, repositoryId, survivorId);
  await tx
    .update(repositoryRedirects)
    .set({ repositoryId: survivorId })
    .where(eq(repositoryRedirects.repositoryId, repositoryId));
  await tx.delete(repositories).where(eq(repositories.id, repositoryId));
}

/** Deletes any other repository row than `survivorId` at owner/name: it gives way to a moved repository. */
export async function deleteOtherRepositoriesNamed(
  tx: Executor,
  owner: string,
  name: string,
  survivorId: number,
): Promise<void> {
  const others = await tx
    .select({ id: repositories.id })
    .from(repositories)
    .where(and(repositoryNamed(owner, name), ne(repositories.id, survivorId)));
  for (const { id } of others) await deleteRepositoryRow(tx, id, survivorId);
}

/** Gives a repository row its new owner/name (and GitHub's id, when known). */
export async function renameRepositoryRow(
  tx: Executor,
  repositoryId: number,
  to: { owner: string; name: string; githubId?: number | null },
): Promise<void> {
  await tx
    .update(repositories)
    .set({
      owner: to.owner,
      name: to.name,
      ...(to.githubId ? { githubId: to.githubId } : {}),
      updatedAt: new Date(),
    })
    .where(eq(repositories.id, repositoryId));
}

/**
 * Deletes the rows of names that never held anything once GitHub's not-found answer is older than
 * `ttlSeconds` (no head, no skills, no redirect to them); their crawl reports go with them. Returns their names.
 */
export async function deleteUnfoundRepositories(
  tx: Executor,
  ttlSeconds: number,
): Promise<{ owner: string; name: string }[]> {
  const ttl = sql`(${ttlSeconds}::int * interval '1 second')`;
  return tx
    .delete(repositories)
    .where(
      and(
        eq(repositories.lastCrawlOutcome, 'gone'),
        isNull(repositories.headRevision),
        sql`${repositories.lastCrawledAt} < now() - ${ttl}`,
        sql`not exists (select 1 from ${skills} s where s.repository_id = ${repositories.id})`,
        sql`not exists (select 1 from ${repositoryRedirects} r where r.repository_id = ${repositories.id})`,
      ),
    )
    .returning({ owner: repositories.owner, name: repositories.name });
}

/** Everything GET /v1/repos/<owner>/<repo> and `crawl status --repo` show. */
export interface RepositoryStatus {
  owner: string;
  name: string;
  status: IndexStatus;
  headRevision: string | null;
  lastCrawledAt: Date | null;
  /** Listed skills (live, parsed), by identity. */
  skills: string[];
  problems: RepositoryProblem[];
  /** The open index request, when there is one. */
  request: { id: number; createdAt: Date; coalesced: number } | null;
  repository: typeof repositories.$inferSelect | null;
}

/**
 * The index status of owner/name (SPEC 2.6), or `{ movedTo }` when the repository was renamed or
 * transferred. A repository the hub never saw is `not-indexed` (or `queued` while a request is open).
 */
export async function repositoryStatus(
  db: Database,
  owner: string,
  name: string,
): Promise<RepositoryStatus | { movedTo: { owner: string; name: string } }> {
  const [repo] = await db.select().from(repositories).where(repositoryNamed(owner, name)).limit(1);
  if (!repo) {
    const moved = await findRepositoryRedirect(db, owner, name);
    if (moved) return { movedTo: moved };
  }
  const open = await openIndexRequest(db, owner, name);
  const listed = repo ? await listedRepositorySkillIdentities(db, repo.id) : [];
  let status: IndexStatus;
  if (open) {
    const started = repo?.crawlStartedAt && repo.crawlStartedAt >= open.createdAt;
    status = started ? 'crawling' : 'queued';
  } else if (!repo?.lastCrawlOutcome) {
    status = 'not-indexed';
  } else {
    status =
      repo.lastCrawlOutcome === 'indexed' || repo.lastCrawlOutcome === 'unchanged' ? 'indexed' : 'failed';
  }
  const problems = [...(repo?.problems ?? [])];
  if (status === 'indexed' && listed.length === 0 && problems.length === 0) {
    problems.push({ path: '', code: 'no-skills', message: 'The repository holds no SKILL.md.' });
  }
  if (status === 'failed' && problems.length === 0 && repo?.lastCrawlError) {
    problems.push({ path: '', code: 'crawl-failed', message: repo.lastCrawlError });
  }
  return {
    owner: repo?.owner ?? owner,
    name: repo?.name ?? name,
    status,
    headRevision: repo?.headRevision ?? null,
    lastCrawledAt: repo?.lastCrawledAt ?? null,
    skills: listed,
    problems,
    request: open ? { id: open.id, createdAt: open.createdAt, coalesced: open.coalesced } : null,
    repository: repo ?? null,
  };
}

/**
 * The name a repository goes by now: itself when the hub knows it (or has never heard of it), the new
 * name when it was renamed or transferred away from owner/name.
 */
export async function currentRepositoryName(
  db: Executor,
  owner: string,
  name: string,
): Promise<{ owner: string; name: string; known: boolean; moved: boolean }> {
  const [known] = await db
    .select({ owner: repositories.owner, name: repositories.name })
    .from(repositories)
    .where(repositoryNamed(owner, name))
    .limit(1);
  if (known) return { ...known, known: true, moved: false };
  const moved = await findRepositoryRedirect(db, owner, name);
  if (moved) return { ...moved, known: true, moved: true };
  return { owner, name, known: false, moved: false };
}

/**
 * The repository a GitHub event is about, as the hub knows it: the one with GitHub's numeric id when the
 * hub has it, else the first of `names` (owner/name, as the event claims them) that the hub knows, under
 * its current name. Undefined when none is known.
 */
export async function repositoryForEvent(
  db: Executor,
  githubId: number | null,
  names: { owner: string; name: string }[],
): Promise<{ owner: string; name: string; githubId: number | null } | undefined> {
  if (githubId !== null) {
    const [byId] = await db
      .select({ owner: repositories.owner, name: repositories.name, githubId: repositories.githubId })
      .from(repositories)
      .where(eq(repositories.githubId, githubId))
      .limit(1);
    if (byId) return byId;
  }
  for (const { owner, name } of names) {
    const current = await currentRepositoryName(db, owner, name);
    if (!current.known) continue;
    const [row] = await db
      .select({ owner: repositories.owner, name: repositories.name, githubId: repositories.githubId })
      .from(repositories)
      .where(repositoryNamed(current.owner, current.name))
      .limit(1);
    if (row) return row;
  }
  return undefined;
}

/** Problem codes of a crawl that found nothing GitHub lets the public index hold. */
const UNFOUND_CODES = ['repository-not-found', 'repository-private'];

/**
 * When owner/name was last crawled and GitHub answered 404 (or private) less than `ttlSeconds` ago: that
 * answer, and when it may be asked again. Undefined otherwise (never crawled, found, or the answer is old).
 */
export async function recentlyUnfound(
  db: Executor,
  owner: string,
  name: string,
  ttlSeconds: number,
): Promise<{ code: string; crawledAt: Date; retryAt: Date } | undefined> {
  const [repo] = await db
    .select({
      outcome: repositories.lastCrawlOutcome,
      crawledAt: repositories.lastCrawledAt,
      problems: repositories.problems,
    })
    .from(repositories)
    .where(repositoryNamed(owner, name))
    .limit(1);
  const code = repo?.problems[0]?.code;
  if (!repo?.crawledAt || repo.outcome !== 'gone' || !code || !UNFOUND_CODES.includes(code)) return undefined;
  const retryAt = new Date(repo.crawledAt.getTime() + ttlSeconds * 1000);
  return retryAt.getTime() > Date.now() ? { code, crawledAt: repo.crawledAt, retryAt } : undefined;
}

/**
 * Whether the repository's last crawl found it private on GitHub, or not there at all: its skills left the
 * public index, and their stored revisions (`?rev=`) are public no more either (SPEC 2.8). A 404 counts: it
 * is GitHub's answer for a private repository the hub's token cannot read (a push-triggered crawl after a
 * repository went private reads exactly that), and the hub must not serve the two differently (SPEC 2.2).
 */
export async function repositoryWentPrivate(db: Executor, repositoryId: number): Promise<boolean> {
  const [repo] = await db
    .select({ outcome: repositories.lastCrawlOutcome, problems: repositories.problems })
    .from(repositories)
    .where(eq(repositories.id, repositoryId))
    .limit(1);
  const unfound = (outcome: string | null | undefined, problems: { code: string }[] | undefined) =>
    outcome === 'gone' && problems?.[0] !== undefined && UNFOUND_CODES.includes(problems[0].code);
  if (repo?.outcome !== 'failed') return unfound(repo?.outcome, repo?.problems);
  // A failed crawl (a timeout, GitHub not answering) learnt nothing: GitHub's last answer still stands.
  const [answer] = await db
    .select({ outcome: crawlReports.outcome, errors: crawlReports.errors })
    .from(crawlReports)
    .where(and(eq(crawlReports.repositoryId, repositoryId), ne(crawlReports.outcome, 'failed')))
    .orderBy(desc(crawlReports.startedAt))
    .limit(1);
  return unfound(answer?.outcome, answer?.errors);
}
