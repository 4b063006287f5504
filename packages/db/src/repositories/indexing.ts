import { formatIdentity } from '@atskills/protocol';
import { and, asc, eq, isNull, ne, sql } from 'drizzle-orm';
import type { Database, Executor } from '../client.js';
import { crawlRuns } from '../schema/crawls.js';
import { indexRequests, repositoryRedirects, webhookDeliveries } from '../schema/indexing.js';
import { type RepositoryProblem, repositories } from '../schema/repositories.js';
import { skills } from '../schema/skills.js';
import { repositoryNamed } from './repository-name.js';

/** SPEC 2.6 index status of a repository. */
export type IndexStatus = 'queued' | 'crawling' | 'indexed' | 'failed' | 'not-indexed';

/** Where a request came from. */
export type IndexRequestOrigin = 'api' | 'on-demand' | 'webhook';

/** An open request whose run never got attached (the process died between) stops blocking after this. */
const UNATTACHED_REQUEST_TTL = sql`interval '2 minutes'`;

function requestNamed(owner: string, name: string) {
  return and(
    sql`lower(${indexRequests.owner}) = lower(${owner})`,
    sql`lower(${indexRequests.name}) = lower(${name})`,
  );
}

/** Closes the open request of a repository once its run has finished (or it was never attached). */
async function closeFinishedRequest(db: Executor, owner: string, name: string): Promise<void> {
  await db
    .update(indexRequests)
    .set({ state: 'closed', closedAt: new Date() })
    .where(
      and(
        requestNamed(owner, name),
        eq(indexRequests.state, 'open'),
        sql`(
          (${indexRequests.runId} is null and ${indexRequests.createdAt} < now() - ${UNATTACHED_REQUEST_TTL})
          or exists (select 1 from ${crawlRuns} r where r.id = ${indexRequests.runId} and r.status <> 'running')
        )`,
      ),
    );
}

/** The open index request of a repository, if any (finished ones are closed first). */
export async function openIndexRequest(db: Executor, owner: string, name: string) {
  await closeFinishedRequest(db, owner, name);
  const [open] = await db
    .select()
    .from(indexRequests)
    .where(and(requestNamed(owner, name), eq(indexRequests.state, 'open')))
    .limit(1);
  return open;
}

/**
 * Opens an index request for owner/name, or joins the one already open (coalescing: the partial unique
 * index admits one open request per repository, so of many concurrent callers exactly one gets
 * `created: true` and starts the crawl).
 */
export async function requestIndexing(
  db: Executor,
  owner: string,
  name: string,
  origin: IndexRequestOrigin,
): Promise<{ id: number; created: boolean; runId: number | null; createdAt: Date }> {
  // The common case under a burst is joining: one insert attempt and one update, and closing a finished
  // request (then trying again) only when neither applies.
  for (let attempt = 0; attempt < 3; attempt++) {
    const [inserted] = await db
      .insert(indexRequests)
      .values({ owner, name, origin })
      .onConflictDoNothing()
      .returning();
    if (inserted) return { id: inserted.id, created: true, runId: null, createdAt: inserted.createdAt };
    const [joined] = await db
      .update(indexRequests)
      .set({ coalesced: sql`${indexRequests.coalesced} + 1` })
      .where(
        and(
          requestNamed(owner, name),
          eq(indexRequests.state, 'open'),
          sql`not exists (select 1 from ${crawlRuns} r where r.id = ${indexRequests.runId} and r.status <> 'running')`,
          sql`(${indexRequests.runId} is not null or ${indexRequests.createdAt} >= now() - ${UNATTACHED_REQUEST_TTL})`,
        ),
      )
      .returning();
    if (joined) return { id: joined.id, created: false, runId: joined.runId, createdAt: joined.createdAt };
    // The open request has finished: close it, then open a new one.
    await closeFinishedRequest(db, owner, name);
  }
  throw new Error(`could not open an index request for ${owner}/${name}`);
}

/** Records the run an index request started. */
export async function attachIndexRequestRun(db: Executor, requestId: number, runId: number) {
  await db.update(indexRequests).set({ runId }).where(eq(indexRequests.id, requestId));
}

/** Closes a request whose run could not be started (so the next request tries again at once). */
export async function abandonIndexRequest(db: Executor, requestId: number) {
  await db
    .update(indexRequests)
    .set({ state: 'closed', closedAt: new Date() })
    .where(eq(indexRequests.id, requestId));
}

/** Deletes a request that was refused before its run started (it leaves no row behind). */
export async function dropIndexRequest(db: Executor, requestId: number) {
  await db.delete(indexRequests).where(and(eq(indexRequests.id, requestId), isNull(indexRequests.runId)));
}

/** The current owner/name of a repository that was renamed or transferred away from owner/name. */
export async function findRepositoryRedirect(
  db: Executor,
  owner: string,
  name: string,
): Promise<{ owner: string; name: string } | undefined> {
  const [row] = await db
    .select({ owner: repositories.owner, name: repositories.name })
    .from(repositoryRedirects)
    .innerJoin(repositories, eq(repositories.id, repositoryRedirects.repositoryId))
    .where(
      and(
        sql`lower(${repositoryRedirects.oldOwner}) = lower(${owner})`,
        sql`lower(${repositoryRedirects.oldName}) = lower(${name})`,
      ),
    )
    .limit(1);
  return row;
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
  const listed = repo
    ? await db
        .select({ identity: skills.identity })
        .from(skills)
        .where(and(eq(skills.repositoryId, repo.id), isNull(skills.goneAt), isNull(skills.parseError)))
        .orderBy(asc(skills.identity))
    : [];
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
    skills: listed.map((s) => s.identity),
    problems,
    request: open ? { id: open.id, createdAt: open.createdAt, coalesced: open.coalesced } : null,
    repository: repo ?? null,
  };
}

/** How long a delivery id and a body digest are remembered (GitHub redelivers for up to 3 days). */
const DELIVERY_WINDOW = sql`interval '7 days'`;

/**
 * Records a webhook delivery once: false when its X-GitHub-Delivery, or its body digest (`bodySha256`, of
 * the route and the signed body), was seen within the window: a redelivery, or a replay of a signed body
 * under a new delivery id. Rows older than the window are pruned first.
 */
export async function recordWebhookDelivery(
  db: Executor,
  delivery: {
    deliveryId: string;
    event: string;
    action: string | null;
    repository: string | null;
    outcome: string;
    bodySha256?: string | null;
  },
): Promise<boolean> {
  await db.delete(webhookDeliveries).where(sql`${webhookDeliveries.receivedAt} < now() - ${DELIVERY_WINDOW}`);
  const inserted = await db
    .insert(webhookDeliveries)
    .values(delivery)
    .onConflictDoNothing()
    .returning({ id: webhookDeliveries.deliveryId });
  return inserted.length > 0;
}

/** Forgets a delivery whose handling failed, so GitHub's redelivery is handled again. */
export async function forgetWebhookDelivery(db: Executor, deliveryId: string): Promise<void> {
  await db.delete(webhookDeliveries).where(eq(webhookDeliveries.deliveryId, deliveryId));
}

/**
 * Moves a renamed or transferred repository to owner/name in one transaction: the row, its skills (with
 * their revisions, which hang off the skill ids, and their popularity) get the new identities, and the
 * old name redirects. A row already made for the new name (crawled before the move was noticed) gives way
 * to the moved one, which carries the history. Returns false when there is nothing to move.
 */
export async function moveRepository(
  db: Database,
  from: { owner: string; name: string },
  to: { owner: string; name: string; githubId?: number | null },
): Promise<{ moved: boolean; identities: { from: string; to: string }[] }> {
  return db.transaction(async (tx) => {
    const [repo] = await tx
      .select()
      .from(repositories)
      .where(repositoryNamed(from.owner, from.name))
      .for('update');
    if (!repo) return { moved: false, identities: [] };
    if (repo.owner === to.owner && repo.name === to.name) return { moved: false, identities: [] };
    const [target] = await tx
      .select({ id: repositories.id })
      .from(repositories)
      .where(and(repositoryNamed(to.owner, to.name), ne(repositories.id, repo.id)));
    if (target) {
      const [held] = await tx
        .select({ n: sql<number>`count(*)::int` })
        .from(skills)
        .where(eq(skills.repositoryId, repo.id));
      if ((held?.n ?? 0) === 0) {
        // The old name's row is an empty shell (a crawl of the old name made it): the row at the new name
        // is the repository; the shell goes and the old name redirects there.
        await tx.delete(repositories).where(eq(repositories.id, repo.id));
        await tx
          .insert(repositoryRedirects)
          .values({ oldOwner: repo.owner, oldName: repo.name, repositoryId: target.id })
          .onConflictDoNothing();
        return { moved: false, identities: [] };
      }
    }
    const sameName =
      repo.owner.toLowerCase() === to.owner.toLowerCase() &&
      repo.name.toLowerCase() === to.name.toLowerCase();
    if (!sameName) {
      await tx
        .delete(repositories)
        .where(and(repositoryNamed(to.owner, to.name), ne(repositories.id, repo.id)));
    }
    await tx
      .update(repositories)
      .set({
        owner: to.owner,
        name: to.name,
        ...(to.githubId ? { githubId: to.githubId } : {}),
        updatedAt: new Date(),
      })
      .where(eq(repositories.id, repo.id));
    const oldPrefix = formatIdentity('gh', `${repo.owner}/${repo.name}`);
    const newPrefix = formatIdentity('gh', `${to.owner}/${to.name}`);
    const before = await tx
      .select({ id: skills.id, identity: skills.identity })
      .from(skills)
      .where(eq(skills.repositoryId, repo.id));
    const moved = await tx
      .update(skills)
      .set({
        identity: sql`${newPrefix} || substr(${skills.identity}, ${oldPrefix.length + 1})`,
        owner: to.owner,
        container: to.name,
        updatedAt: new Date(),
      })
      .where(eq(skills.repositoryId, repo.id))
      .returning({ id: skills.id, identity: skills.identity });
    const fromById = new Map(before.map((b) => [b.id, b.identity]));
    if (!sameName) {
      // A repository lives at the new name now: an older redirect from it no longer applies.
      // A repository lives at the new name now: an older redirect from it no longer applies; the old name's
      // redirect is (re)pointed at this repository.
      for (const gone of [to, repo]) {
        await tx
          .delete(repositoryRedirects)
          .where(
            and(
              sql`lower(${repositoryRedirects.oldOwner}) = lower(${gone.owner})`,
              sql`lower(${repositoryRedirects.oldName}) = lower(${gone.name})`,
            ),
          );
      }
      await tx
        .insert(repositoryRedirects)
        .values({ oldOwner: repo.owner, oldName: repo.name, repositoryId: repo.id });
    }
    return {
      moved: true,
      identities: moved.map((m) => ({ from: fromById.get(m.id) ?? '', to: m.identity })),
    };
  });
}

/**
 * A repository that was deleted or made private upstream: its skills leave search and answer 410, and the
 * status says why. The stored ETag is dropped so a later crawl (e.g. after `publicized`) reads it afresh.
 */
export async function markRepositoryUnavailable(
  db: Database,
  owner: string,
  name: string,
  problem: RepositoryProblem,
): Promise<{ found: boolean; identities: string[] }> {
  return db.transaction(async (tx) => {
    const [repo] = await tx.select().from(repositories).where(repositoryNamed(owner, name)).for('update');
    if (!repo) return { found: false, identities: [] };
    const now = new Date();
    const gone = await tx
      .update(skills)
      .set({ goneAt: now, updatedAt: now })
      .where(and(eq(skills.repositoryId, repo.id), isNull(skills.goneAt)))
      .returning({ identity: skills.identity });
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
    return { found: true, identities: gone.map((g) => g.identity) };
  });
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

/** Records what the hub did with a delivery (queued | applied | ignored). */
export async function setWebhookDeliveryOutcome(db: Executor, deliveryId: string, outcome: string) {
  await db.update(webhookDeliveries).set({ outcome }).where(eq(webhookDeliveries.deliveryId, deliveryId));
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
 * Forgets what index requests for names that never held anything left behind once the not-found answer
 * is older than `ttlSeconds`: the repository row (its crawl reports go with it), its closed index
 * requests, and the request runs left without a report. A made-up name thus leaves no permanent row.
 */
export async function pruneUnfoundRepositories(db: Database, ttlSeconds: number): Promise<number> {
  const ttl = sql`(${ttlSeconds}::int * interval '1 second')`;
  return db.transaction(async (tx) => {
    const gone = await tx
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
    for (const { owner, name } of gone) {
      await tx.delete(indexRequests).where(and(requestNamed(owner, name), eq(indexRequests.state, 'closed')));
    }
    if (gone.length > 0) {
      await tx.execute(sql`
        delete from ${crawlRuns} r
        where r.kind = 'request' and r.status <> 'running' and r.finished_at < now() - ${ttl}
          and not exists (select 1 from crawl_reports c where c.run_id = r.id)
          and not exists (select 1 from ${indexRequests} q where q.run_id = r.id and q.state = 'open')`);
    }
    return gone.length;
  });
}
