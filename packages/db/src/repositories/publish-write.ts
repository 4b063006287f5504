import type { SafetyFinding } from '@atskills/protocol';
import { and, desc, eq, gte, inArray, isNull, ne, sql } from 'drizzle-orm';
import type { Executor } from '../client.js';
import { blobs } from '../schema/blobs.js';
import { type SkillFile, skills } from '../schema/skills.js';
import { collectionRevisions, collections, namespaces, users } from '../schema/teams.js';
import {
  insertCollectionRevision,
  markHubSkillsGone,
  saveCollectionRow,
  storeBlobs,
  upsertHubSkills,
} from './hub-collection-write.js';

export type CollectionRow = typeof collections.$inferSelect;

/** One skill of a validated publish, ready to store. */
export interface PublishedSkill {
  /** `hub:namespace/collection[/path]`, lowercase. */
  identity: string;
  /** Folder path inside the collection, lowercase ('' for a root skill). */
  path: string;
  name: string;
  description: string;
  frontmatter: Record<string, unknown>;
  body: string;
  warnings: string[];
  /** Files relative to the skill folder. */
  files: SkillFile[];
  /** sha256 of the skill's canonical manifest. */
  revision: string;
  flags: SafetyFinding[];
  descriptionTokens: number;
  bodyTokens: number;
}

/** Everything one publish writes; validated before any of it reaches the database. */
export interface PublishWrite {
  namespaceId: number;
  namespace: string;
  collection: string;
  visibility: 'public' | 'private';
  /** sha256 of the collection's canonical manifest. */
  revision: string;
  /** Files relative to the collection root. */
  manifest: { path: string; size: number; sha256: string }[];
  sizeBytes: number;
  skills: PublishedSkill[];
  blobs: { sha256: string; size: number; content: Buffer }[];
  publishedBy: number | null;
  at: Date;
  scannerVersion: string;
}

/** What a publish did. */
export interface PublishOutcome {
  collectionId: number;
  previousRevision: string | null;
  unchanged: boolean;
}

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
 * Stores a validated publish: blobs, the collection revision, one row per skill (current) plus its
 * revision history, and marks skills that left the collection gone. Run it inside a transaction; a
 * concurrent publish of the same collection waits on an advisory lock so revisions never interleave.
 */
export async function writePublish(tx: Executor, input: PublishWrite): Promise<PublishOutcome> {
  await tx.execute(
    sql`select pg_advisory_xact_lock(hashtext(${`publish:${input.namespace}/${input.collection}`}))`,
  );
  const [existing] = await tx
    .select()
    .from(collections)
    .where(and(eq(collections.namespaceId, input.namespaceId), eq(collections.name, input.collection)))
    .limit(1);
  const previousRevision = existing?.currentRevision ?? null;

  if (existing && !existing.deletedAt && existing.currentRevision === input.revision) {
    // Identical content: no new revision. A visibility change alone still applies.
    if (existing.visibility !== input.visibility) {
      await tx
        .update(collections)
        .set({ visibility: input.visibility, updatedAt: input.at })
        .where(eq(collections.id, existing.id));
      await tx
        .update(skills)
        .set({ visibility: input.visibility })
        .where(and(eq(skills.collectionId, existing.id), isNull(skills.goneAt)));
      await hideGoneSkills(tx, existing.id, input.visibility);
    }
    return { collectionId: existing.id, previousRevision, unchanged: true };
  }

  await storeBlobs(tx, input.blobs);
  const collectionId = await saveCollectionRow(tx, existing?.id, {
    namespaceId: input.namespaceId,
    name: input.collection,
    visibility: input.visibility,
    currentRevision: input.revision,
    at: input.at,
  });
  await insertCollectionRevision(tx, {
    collectionId,
    revision: input.revision,
    manifest: input.manifest,
    skillCount: input.skills.length,
    sizeBytes: input.sizeBytes,
    visibility: input.visibility,
    publishedBy: input.publishedBy,
    at: input.at,
  });
  await upsertHubSkills(
    tx,
    {
      collectionId,
      namespace: input.namespace,
      collection: input.collection,
      visibility: input.visibility,
      popularity: existing?.popularity ?? 0,
      commit: input.revision,
      at: input.at,
    },
    input.skills.map((s) => ({
      identity: s.identity,
      path: s.path,
      revision: s.revision,
      content: {
        ...s,
        parseError: null,
        // The publish's blobs are stored once for the whole collection, above.
        blobs: [],
        verdict: { contentSha256: s.revision, scannerVersion: input.scannerVersion },
      },
    })),
  );
  await markHubSkillsGone(
    tx,
    collectionId,
    input.skills.map((s) => s.identity),
    input.at,
  );
  await hideGoneSkills(tx, collectionId, input.visibility);
  return { collectionId, previousRevision, unchanged: false };
}

/**
 * A gone skill keeps the visibility it had when it left, and becomes private when its collection does:
 * a collection going private must not leave its dropped skills public (they would reveal it), and one
 * going public must not publish skills that were dropped while it was private.
 */
async function hideGoneSkills(tx: Executor, collectionId: number, visibility: 'public' | 'private') {
  if (visibility !== 'private') return;
  await tx
    .update(skills)
    .set({ visibility: 'private' })
    .where(and(eq(skills.collectionId, collectionId), sql`${skills.goneAt} is not null`));
}

/** Marks a collection deleted and its skills gone and members-only; false when it was already deleted. */
export async function markCollectionDeleted(tx: Executor, collectionId: number, at: Date): Promise<boolean> {
  const updated = await tx
    .update(collections)
    .set({ deletedAt: at, updatedAt: at })
    .where(and(eq(collections.id, collectionId), isNull(collections.deletedAt)))
    .returning({ id: collections.id });
  if (updated.length === 0) return false;
  await tx
    .update(skills)
    .set({ goneAt: at })
    .where(and(eq(skills.collectionId, collectionId), isNull(skills.goneAt)));
  // Members see 410; everyone else 404, as for a name that never existed (a later publish sets it again).
  await tx.update(skills).set({ visibility: 'private' }).where(eq(skills.collectionId, collectionId));
  return true;
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

/** The blobs with these hashes that are already stored (so a publish can skip re-sending them). */
export async function existingBlobHashes(db: Executor, hashes: string[]): Promise<Set<string>> {
  if (hashes.length === 0) return new Set();
  const rows = await db.select({ sha256: blobs.sha256 }).from(blobs).where(inArray(blobs.sha256, hashes));
  return new Set(rows.map((r) => r.sha256));
}
