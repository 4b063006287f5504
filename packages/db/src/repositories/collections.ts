import { and, desc, eq, gte, isNull, ne, sql } from 'drizzle-orm';
import type { Executor } from '../client.js';
import { collectionRevisions, collections, namespaces, users } from '../schema/teams.js';

// Table family `collections` and `collection_revisions` (src/schema/teams.ts): the `hub:` collections,
// published or linked, and their immutable revisions. The transactions that also write their skills are
// in publish.ts and links.ts.

export type CollectionRow = typeof collections.$inferSelect;

/** A collection by namespace and name, deleted ones included. */
export async function findCollection(
  db: Executor,
  namespace: string,
  name: string,
): Promise<(CollectionRow & { namespace: string }) | undefined> {
  const [row] = await db
    .select({ collection: collections, namespace: namespaces.name })
    .from(collections)
    .innerJoin(namespaces, eq(namespaces.id, collections.namespaceId))
    .where(and(eq(namespaces.name, namespace.toLowerCase()), eq(collections.name, name.toLowerCase())))
    .limit(1);
  return row ? { ...row.collection, namespace: row.namespace } : undefined;
}

/**
 * Serialises the publishes of one collection until the transaction ends (a transaction-scoped advisory
 * lock on its name, which holds before the collection's row exists), so revisions never interleave.
 */
export async function lockCollectionPublish(
  tx: Executor,
  namespace: string,
  collection: string,
): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`publish:${namespace}/${collection}`}))`);
}

/** The collection row of a namespace by name, deleted or not. */
export function findCollectionRow(
  tx: Executor,
  namespaceId: number,
  name: string,
): Promise<CollectionRow | undefined> {
  return collectionRow(tx, namespaceId, name, false);
}

/** The collection row of a namespace by name, deleted or not, locked until the transaction ends (a new link). */
export function lockCollectionRow(
  tx: Executor,
  namespaceId: number,
  name: string,
): Promise<CollectionRow | undefined> {
  return collectionRow(tx, namespaceId, name, true);
}

async function collectionRow(
  tx: Executor,
  namespaceId: number,
  name: string,
  lock: boolean,
): Promise<CollectionRow | undefined> {
  const query = tx
    .select()
    .from(collections)
    .where(and(eq(collections.namespaceId, namespaceId), eq(collections.name, name)))
    .limit(1);
  const [existing] = await (lock ? query.for('update') : query);
  return existing;
}

/**
 * The collection row of a publish or a new link: the existing row (deleted or not) is revived in place,
 * otherwise one is created. Returns its id.
 */
export async function saveCollectionRow(
  tx: Executor,
  existingId: number | undefined,
  row: {
    namespaceId: number;
    name: string;
    visibility: 'public' | 'private';
    currentRevision: string | null;
    at: Date;
  },
): Promise<number> {
  if (existingId !== undefined) {
    await tx
      .update(collections)
      .set({
        currentRevision: row.currentRevision,
        visibility: row.visibility,
        updatedAt: row.at,
        deletedAt: null,
      })
      .where(eq(collections.id, existingId));
    return existingId;
  }
  const [created] = await tx
    .insert(collections)
    .values({
      namespaceId: row.namespaceId,
      name: row.name,
      visibility: row.visibility,
      currentRevision: row.currentRevision,
      createdAt: row.at,
      updatedAt: row.at,
    })
    .returning({ id: collections.id });
  if (!created) throw new Error('insert into collections returned no row');
  return created.id;
}

/** Sets a collection's visibility alone (identical content re-published with another visibility). */
export async function setCollectionVisibility(
  tx: Executor,
  collectionId: number,
  visibility: 'public' | 'private',
  at: Date,
): Promise<void> {
  await tx.update(collections).set({ visibility, updatedAt: at }).where(eq(collections.id, collectionId));
}

/** Points a collection at its new current revision (a linked repository's indexed commit). */
export async function setCollectionRevision(
  tx: Executor,
  collectionId: number,
  revision: string,
  at: Date,
): Promise<void> {
  await tx
    .update(collections)
    .set({ currentRevision: revision, updatedAt: at })
    .where(eq(collections.id, collectionId));
}

/** Marks a collection row deleted; false when it was already deleted. */
export async function markCollectionRowDeleted(
  tx: Executor,
  collectionId: number,
  at: Date,
): Promise<boolean> {
  const updated = await tx
    .update(collections)
    .set({ deletedAt: at, updatedAt: at })
    .where(and(eq(collections.id, collectionId), isNull(collections.deletedAt)))
    .returning({ id: collections.id });
  return updated.length > 0;
}

/** Records one revision of a collection (its manifest and size); one recorded already becomes the newest. */
export async function insertCollectionRevision(
  tx: Executor,
  row: {
    collectionId: number;
    revision: string;
    manifest: { path: string; size: number; sha256: string }[];
    skillCount: number;
    sizeBytes: number;
    visibility: string;
    publishedBy: number | null;
    at: Date;
  },
): Promise<void> {
  await tx
    .insert(collectionRevisions)
    .values({
      collectionId: row.collectionId,
      revision: row.revision,
      manifest: row.manifest,
      skillCount: row.skillCount,
      sizeBytes: row.sizeBytes,
      visibility: row.visibility,
      publishedBy: row.publishedBy,
      createdAt: row.at,
    })
    // Published again (a revert, or a republish after a delete): the list is in the order revisions were
    // made current, so the row takes a fresh id (ids are commit order) and says who made it current and
    // when. Once published as public, its metadata and content were public: it stays so.
    .onConflictDoUpdate({
      target: [collectionRevisions.collectionId, collectionRevisions.revision],
      set: {
        id: sql`nextval(pg_get_serial_sequence('collection_revisions', 'id'))`,
        publishedBy: row.publishedBy,
        createdAt: row.at,
        visibility: sql`case when ${collectionRevisions.visibility} = 'public' then 'public' else excluded.visibility end`,
      },
    });
}

/** Every published revision of a collection, newest first. */
export async function listCollectionRevisions(
  db: Executor,
  collectionId: number,
): Promise<
  {
    revision: string;
    skillCount: number;
    sizeBytes: number;
    visibility: string;
    publishedBy: string | null;
    createdAt: Date;
  }[]
> {
  return (
    db
      .select({
        revision: collectionRevisions.revision,
        skillCount: collectionRevisions.skillCount,
        sizeBytes: collectionRevisions.sizeBytes,
        visibility: collectionRevisions.visibility,
        publishedBy: users.name,
        createdAt: collectionRevisions.createdAt,
      })
      .from(collectionRevisions)
      .leftJoin(users, eq(users.id, collectionRevisions.publishedBy))
      .where(eq(collectionRevisions.collectionId, collectionId))
      // Ids are drawn inside the publish transaction, after its advisory lock: their order is commit order,
      // while created_at is when each request arrived (concurrent publishes would interleave).
      .orderBy(desc(collectionRevisions.id))
  );
}

/**
 * The most popular live public collections outside one namespace (look-alike candidates). Only public rows:
 * a look-alike warning must never reveal a private name.
 */
export async function popularPublicCollections(
  db: Executor,
  opts: { excludeNamespaceId: number; minPopularity: number; limit: number },
): Promise<{ namespace: string; name: string; popularity: number }[]> {
  return db
    .select({ namespace: namespaces.name, name: collections.name, popularity: collections.popularity })
    .from(collections)
    .innerJoin(namespaces, eq(namespaces.id, collections.namespaceId))
    .where(
      and(
        eq(collections.visibility, 'public'),
        isNull(collections.deletedAt),
        ne(collections.namespaceId, opts.excludeNamespaceId),
        gte(collections.popularity, opts.minPopularity),
      ),
    )
    .orderBy(desc(collections.popularity), collections.name)
    .limit(opts.limit);
}
