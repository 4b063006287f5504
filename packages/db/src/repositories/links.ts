import { formatIdentity } from '@atskills/protocol';
import { and, asc, eq, ne, sql } from 'drizzle-orm';
import type { Database, Executor } from '../client.js';
import { type LinkProblem, repositoryLinks } from '../schema/links.js';
import { collections, namespaces } from '../schema/teams.js';
import { uniqueBy } from './batches.js';
import { storeBlobs } from './blobs.js';
import {
  type CollectionRow,
  insertCollectionRevision,
  lockCollectionRow,
  markCollectionRowDeleted,
  saveCollectionRow,
  setCollectionRevision,
} from './collections.js';
import type { SkillRevisionContent } from './skills/content.js';
import {
  clearLinkedSkillsStale,
  markHubSkillsGone,
  markLinkedSkillsGone,
  markLinkedSkillsStale,
  touchLinkedSkills,
  upsertHubSkills,
} from './skills/hub.js';
import { appendAudit } from './teams.js';

// Table family `repository_links` (src/schema/links.ts): a team's collection kept in a GitHub repository
// folder, and the transactions of a link's life (created with its collection, indexed, failing, removed)
// as steps over the collections, skills and blobs families, whose SQL is in their files.

export type LinkRow = typeof repositoryLinks.$inferSelect;

/** A link with the names that make its identity `hub:<namespace>/<collection>`, and the collection's visibility. */
export type LinkWithNames = LinkRow & { namespace: string; collection: string; visibility: string };

const withNames = {
  link: repositoryLinks,
  namespace: namespaces.name,
  collection: collections.name,
  visibility: collections.visibility,
};

function flatten(
  rows: { link: LinkRow; namespace: string; collection: string; visibility: string }[],
): LinkWithNames[] {
  return rows.map((r) => ({
    ...r.link,
    namespace: r.namespace,
    collection: r.collection,
    visibility: r.visibility,
  }));
}

function selectLinks(db: Executor) {
  return db
    .select(withNames)
    .from(repositoryLinks)
    .innerJoin(namespaces, eq(namespaces.id, repositoryLinks.namespaceId))
    .innerJoin(collections, eq(collections.id, repositoryLinks.collectionId));
}

/** What a new link stores (the collection row is created or revived with it). */
export interface NewLink {
  namespaceId: number;
  collection: string;
  visibility: 'public' | 'private';
  githubOwner: string;
  githubRepo: string;
  githubRepoId: number | null;
  folder: string;
  credential:
    | { kind: 'app'; installationId: number | null }
    | { kind: 'token'; keyId: string; sealed: string; last4: string; expiresAt: Date | null };
  createdBy: number | null;
  at: Date;
}

/**
 * Creates a link and its collection (a deleted collection of that name is revived, empty until the first
 * index). Returns undefined when a live collection of that name exists already (uploaded or linked).
 */
export async function insertLink(tx: Executor, input: NewLink): Promise<LinkRow | undefined> {
  const existing = await lockCollectionRow(tx, input.namespaceId, input.collection);
  if (existing && !existing.deletedAt) return undefined;
  // A deleted collection's old link row goes before the new one (one link per collection).
  if (existing) await deleteLinksOfCollection(tx, existing.id);
  // Not deleted, but with no revision yet: nothing resolves until the first index.
  const collectionId = await saveCollectionRow(tx, existing?.id, {
    namespaceId: input.namespaceId,
    name: input.collection,
    visibility: input.visibility,
    currentRevision: null,
    at: input.at,
  });
  const c = input.credential;
  const [row] = await tx
    .insert(repositoryLinks)
    .values({
      namespaceId: input.namespaceId,
      collectionId,
      githubOwner: input.githubOwner,
      githubRepo: input.githubRepo,
      githubRepoId: input.githubRepoId,
      folder: input.folder,
      credential: c.kind,
      installationId: c.kind === 'app' ? c.installationId : null,
      tokenKeyId: c.kind === 'token' ? c.keyId : null,
      tokenSealed: c.kind === 'token' ? c.sealed : null,
      tokenLast4: c.kind === 'token' ? c.last4 : null,
      tokenExpiresAt: c.kind === 'token' ? c.expiresAt : null,
      createdBy: input.createdBy,
      createdAt: input.at,
      updatedAt: input.at,
    })
    .returning();
  return row;
}

/** Deletes the link rows of a collection (a deleted collection being linked anew). */
async function deleteLinksOfCollection(tx: Executor, collectionId: number): Promise<void> {
  await tx.delete(repositoryLinks).where(eq(repositoryLinks.collectionId, collectionId));
}

/** The links of a namespace, by collection name. */
export async function listLinks(db: Executor, namespaceId: number): Promise<LinkWithNames[]> {
  return flatten(
    await selectLinks(db).where(eq(repositoryLinks.namespaceId, namespaceId)).orderBy(asc(collections.name)),
  );
}

/** One link by id. */
export async function findLinkById(db: Executor, id: number): Promise<LinkWithNames | undefined> {
  return flatten(await selectLinks(db).where(eq(repositoryLinks.id, id)).limit(1))[0];
}

/** The link that holds a collection, if it is a linked one. */
export async function findLinkOfCollection(
  db: Executor,
  namespace: string,
  collection: string,
): Promise<LinkWithNames | undefined> {
  return flatten(
    await selectLinks(db)
      .where(
        and(eq(namespaces.name, namespace.toLowerCase()), eq(collections.name, collection.toLowerCase())),
      )
      .limit(1),
  )[0];
}

/** Links that follow a GitHub repository (by its numeric id when known, else by name). */
export async function linksOfRepository(
  db: Executor,
  repo: { owner: string; name: string; id?: number | null },
): Promise<LinkWithNames[]> {
  const byName = sql`(lower(${repositoryLinks.githubOwner}), lower(${repositoryLinks.githubRepo})) = (${repo.owner.toLowerCase()}, ${repo.name.toLowerCase()})`;
  const where = repo.id ? sql`(${repositoryLinks.githubRepoId} = ${repo.id} or ${byName})` : byName;
  return flatten(await selectLinks(db).where(where));
}

/** Links that use an App installation. */
export async function linksOfInstallation(db: Executor, installationId: number): Promise<LinkWithNames[]> {
  return flatten(await selectLinks(db).where(eq(repositoryLinks.installationId, installationId)));
}

/** Links whose token was sealed with another key than `currentKeyId` (rotation). */
export async function linksSealedWithOtherKeys(db: Executor, currentKeyId: string): Promise<LinkWithNames[]> {
  return flatten(
    await selectLinks(db).where(
      and(eq(repositoryLinks.credential, 'token'), ne(repositoryLinks.tokenKeyId, currentKeyId)),
    ),
  );
}

/** Stores a re-sealed token (rotation); the token itself is unchanged. */
export async function updateLinkSealedToken(
  db: Executor,
  id: number,
  sealed: { keyId: string; sealed: string },
): Promise<void> {
  await db
    .update(repositoryLinks)
    .set({ tokenKeyId: sealed.keyId, tokenSealed: sealed.sealed })
    .where(eq(repositoryLinks.id, id));
}

/** Records the App installation found for a link (App links find theirs at the first index). */
export async function setLinkInstallation(db: Executor, id: number, installationId: number): Promise<void> {
  await db.update(repositoryLinks).set({ installationId }).where(eq(repositoryLinks.id, id));
}

/** Records GitHub's numeric id of the linked repository (it follows renames and transfers). */
export async function setLinkRepositoryId(db: Executor, id: number, githubRepoId: number): Promise<void> {
  await db.update(repositoryLinks).set({ githubRepoId }).where(eq(repositoryLinks.id, id));
}

/**
 * Follows a rename or transfer GitHub confirmed: the link keeps its collection and the repository's id, and
 * only takes its new name. Nothing changes unless the link still follows that repository id (a link
 * re-pointed meanwhile keeps its name). True when the link was renamed.
 */
export async function renameLinkedRepository(
  db: Executor,
  linkId: number,
  repoId: number,
  to: { owner: string; name: string },
  at: Date,
): Promise<boolean> {
  const updated = await db
    .update(repositoryLinks)
    .set({ githubOwner: to.owner, githubRepo: to.name, updatedAt: at })
    .where(and(eq(repositoryLinks.id, linkId), eq(repositoryLinks.githubRepoId, repoId)))
    .returning({ id: repositoryLinks.id });
  return updated.length > 0;
}

/**
 * Claims the links not touched since `olderThan` (oldest first, at most `limit`) for a scheduled refresh:
 * their `updated_at` moves to `now`, so overlapping ticks never claim one twice. Returns their ids. A link
 * still `queued` or `indexing` that long lost its job (a refused enqueue, an in-process queue that died
 * with its process) and is claimed too, so no link waits forever.
 */
export async function claimLinksDue(
  db: Executor,
  olderThan: Date,
  now: Date,
  limit: number,
): Promise<number[]> {
  const result = await db.execute(sql`
    update repository_links set updated_at = ${now}
    where id in (
      select id from repository_links
      where updated_at < ${olderThan}
      order by updated_at, id
      limit ${limit}
      for update skip locked
    )
    returning id`);
  return (result as unknown as { rows: { id: string | number }[] }).rows.map((r) => Number(r.id));
}

/** Sets a link's status to queued or indexing (the index itself writes `indexed`). */
export async function setLinkStatus(
  db: Executor,
  id: number,
  status: 'queued' | 'indexing',
  at: Date,
): Promise<void> {
  await db.update(repositoryLinks).set({ status, updatedAt: at }).where(eq(repositoryLinks.id, id));
}

/**
 * Marks a link failed (its credential stopped working, the repository went away, ...). The collection
 * keeps its last good revision for members; its skills carry the stale warning until an index succeeds.
 * Returns false when it had already failed with the same code (so owners are told once).
 */
export async function markLinkFailed(
  tx: Executor,
  id: number,
  failure: { code: string; message: string; at: Date },
): Promise<boolean> {
  const [before] = await tx
    .select({
      status: repositoryLinks.status,
      code: repositoryLinks.failureCode,
      collectionId: repositoryLinks.collectionId,
    })
    .from(repositoryLinks)
    .where(eq(repositoryLinks.id, id))
    .for('update');
  if (!before) return false;
  // The failure code stays while a failing link is retried (status goes back to indexing meanwhile).
  const repeated = before.code === failure.code;
  await tx
    .update(repositoryLinks)
    .set({
      status: 'failed',
      failureCode: failure.code,
      failureMessage: failure.message,
      failedAt: repeated ? undefined : failure.at,
      updatedAt: failure.at,
    })
    .where(eq(repositoryLinks.id, id));
  await markLinkedSkillsStale(tx, before.collectionId);
  return !repeated;
}

/**
 * Marks a link failed and, the first time for this reason, tells its owners in the audit log (`link.failed`,
 * with the revision members keep reading). True when the owners were told.
 */
export async function recordLinkFailure(
  db: Database,
  link: LinkWithNames,
  failure: { code: string; message: string; at: Date; requestId?: string | null },
): Promise<boolean> {
  return db.transaction(async (tx) => {
    if (!(await markLinkFailed(tx, link.id, failure))) return false;
    await appendAudit(tx, {
      namespaceId: link.namespaceId,
      actorUserId: null,
      action: 'link.failed',
      target: formatIdentity('hub', `${link.namespace}/${link.collection}`),
      details: {
        repository: `${link.githubOwner}/${link.githubRepo}`,
        code: failure.code,
        message: failure.message,
        servingRevision: link.headCommit,
      },
      requestId: failure.requestId ?? null,
      at: failure.at,
    });
    return true;
  });
}

/** Removes a link: its collection is deleted (410 to members, 404 to everyone else), the sealed token with it. */
export async function deleteLink(tx: Executor, link: LinkRow, at: Date): Promise<void> {
  await tx.delete(repositoryLinks).where(eq(repositoryLinks.id, link.id));
  await markCollectionRowDeleted(tx, link.collectionId, at);
  await markLinkedSkillsGone(tx, link.collectionId, at);
}

/** A skill of a linked collection at the indexed commit: with content when its revision is new. */
export interface LinkedSkill {
  identity: string;
  /** Folder inside the collection, lowercase ('' for a root skill). */
  path: string;
  /** Git tree sha of the skill folder. */
  revision: string;
  content?: SkillRevisionContent;
}

/** One index of a linked collection, written in one transaction. */
export interface LinkIndexWrite {
  linkId: number;
  /** The link's stored head when the index began: another index wrote meanwhile when it differs. */
  expectedHead: string | null;
  commit: string;
  skills: LinkedSkill[];
  /** Files of the collection revision (paths relative to the collection root). */
  manifest: { path: string; size: number; sha256: string }[];
  problems: LinkProblem[];
  at: Date;
}

/**
 * Writes one index of a linked collection: blobs (content-addressed), skills under `hub:<ns>/<coll>` with
 * the collection's visibility, their revisions (`?rev=`), safety verdicts, the collection revision that
 * follows the commit, gone marks, and the link's status. `missing` when the link was removed meanwhile,
 * `superseded` when another index of it wrote since this one began (nothing is written then).
 */
export async function writeLinkIndex(
  db: Database,
  input: LinkIndexWrite,
): Promise<'written' | 'missing' | 'superseded'> {
  return db.transaction(async (tx) => {
    // The link row locked first: a second index of the same link waits, then finds the head moved.
    const row = await lockLinkForIndex(tx, input.linkId);
    if (!row) return 'missing';
    if (row.link.headCommit !== input.expectedHead) return 'superseded';
    const { collection, namespace } = row;
    const at = input.at;
    // Blobs first (in digest order, see storeBlobs): the skill rows name them.
    await storeBlobs(
      tx,
      uniqueBy(
        input.skills.flatMap((s) => s.content?.blobs ?? []),
        (b) => b.sha256,
      ),
    );
    await upsertHubSkills(
      tx,
      {
        collectionId: collection.id,
        namespace,
        collection: collection.name,
        visibility: collection.visibility,
        popularity: collection.popularity,
        commit: input.commit,
        at,
      },
      input.skills.flatMap((s) => (s.content ? [{ ...s, content: s.content }] : [])),
    );
    await touchLinkedSkills(
      tx,
      collection.id,
      input.skills.filter((s) => !s.content).map((s) => s.identity),
      input.commit,
      at,
    );
    // The stale mark goes now that the link reads again; then what this commit no longer holds is gone.
    await clearLinkedSkillsStale(tx, collection.id);
    await markHubSkillsGone(
      tx,
      collection.id,
      input.skills.map((s) => s.identity),
      at,
    );
    await insertCollectionRevision(tx, {
      collectionId: collection.id,
      revision: input.commit,
      manifest: input.manifest,
      skillCount: input.skills.length,
      sizeBytes: input.manifest.reduce((n, f) => n + f.size, 0),
      visibility: collection.visibility,
      publishedBy: null,
      at,
    });
    await setCollectionRevision(tx, collection.id, input.commit, at);
    // The link's head last: the next index compares against it (`expectedHead`).
    await markLinkIndexed(tx, input.linkId, input.commit, input.problems, at);
    return 'written';
  });
}

/** A link with its collection and namespace name, locked until the transaction ends (one index at a time). */
async function lockLinkForIndex(
  tx: Executor,
  linkId: number,
): Promise<{ link: LinkRow; collection: CollectionRow; namespace: string } | undefined> {
  const [row] = await tx
    .select({ link: repositoryLinks, collection: collections, namespace: namespaces.name })
    .from(repositoryLinks)
    .innerJoin(collections, eq(collections.id, repositoryLinks.collectionId))
    .innerJoin(namespaces, eq(namespaces.id, repositoryLinks.namespaceId))
    .where(eq(repositoryLinks.id, linkId))
    .for('update');
  return row;
}

/** Records a successful index on the link: indexed at this commit, its problems, any failure cleared. */
async function markLinkIndexed(
  tx: Executor,
  linkId: number,
  commit: string,
  problems: LinkProblem[],
  at: Date,
): Promise<void> {
  await tx
    .update(repositoryLinks)
    .set({
      status: 'indexed',
      headCommit: commit,
      lastIndexedAt: at,
      problems,
      failureCode: null,
      failureMessage: null,
      failedAt: null,
      updatedAt: at,
    })
    .where(eq(repositoryLinks.id, linkId));
}
