import { and, eq, isNull, sql } from 'drizzle-orm';
import type { Executor } from '../client.js';
import { crawlRuns } from '../schema/crawls.js';
import { indexRequests, repositoryRedirects, webhookDeliveries } from '../schema/indexing.js';
import { repositories } from '../schema/repositories.js';

// Table family `index_requests`, `webhook_deliveries` and `repository_redirects` (src/schema/indexing.ts):
// what asks for a repository to be indexed (requests, GitHub's deliveries) and the old names that lead to
// a moved repository.

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

/** Deletes the closed requests of a forgotten repository name (its open one, if any, stays). */
export async function deleteClosedIndexRequests(tx: Executor, owner: string, name: string): Promise<void> {
  await tx.delete(indexRequests).where(and(requestNamed(owner, name), eq(indexRequests.state, 'closed')));
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

/** Records what the hub did with a delivery (queued | applied | ignored). */
export async function setWebhookDeliveryOutcome(db: Executor, deliveryId: string, outcome: string) {
  await db.update(webhookDeliveries).set({ outcome }).where(eq(webhookDeliveries.deliveryId, deliveryId));
}

/** The redirect row of an old owner/name (case-insensitive, as the unique index on it). */
function redirectFrom(owner: string, name: string) {
  return and(
    sql`lower(${repositoryRedirects.oldOwner}) = lower(${owner})`,
    sql`lower(${repositoryRedirects.oldName}) = lower(${name})`,
  );
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
    .where(redirectFrom(owner, name))
    .limit(1);
  return row;
}

/** Deletes the redirect from owner/name: a repository lives at that name again, so it no longer applies. */
export async function deleteRedirectFrom(db: Executor, owner: string, name: string): Promise<void> {
  await db.delete(repositoryRedirects).where(redirectFrom(owner, name));
}

/**
 * Makes an old owner/name lead to a repository. With `ifAbsent`, a redirect from that name stored already
 * is kept (an empty shell giving way); without, the caller has just deleted it (a move).
 */
export async function insertRedirect(
  tx: Executor,
  row: { oldOwner: string; oldName: string; repositoryId: number },
  options: { ifAbsent?: boolean } = {},
): Promise<void> {
  const insert = tx.insert(repositoryRedirects).values(row);
  await (options.ifAbsent ? insert.onConflictDoNothing() : insert);
}
