import type { SafetyFinding } from '@atskills/protocol';
import { and, desc, eq, gte, inArray, isNull, ne, notInArray, sql } from 'drizzle-orm';
import { blobs, safetyVerdicts } from '../schema/blobs.js';
import { type SkillFile, skillRevisions, skills } from '../schema/skills.js';
import { collectionRevisions, collections, namespaces, users } from '../schema/teams.js';
import { skillContentFromExcluded } from './skill-upsert.js';
import type { DbExecutor } from './teams.js';

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

// Rows per multi-row insert; blob batches are also cut by size so one statement stays a few MiB.
const BATCH_ROWS = 100;
const BATCH_BYTES = 8 * 1024 * 1024;

/** A collection by namespace and name, deleted ones included. */
export async function findCollection(
  db: DbExecutor,
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
export async function writePublish(tx: DbExecutor, input: PublishWrite): Promise<PublishOutcome> {
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

  for (const batch of batches(input.blobs, (b) => b.size)) {
    await tx.insert(blobs).values(batch).onConflictDoNothing({ target: blobs.sha256 });
  }

  let collectionId: number;
  if (existing) {
    collectionId = existing.id;
    await tx
      .update(collections)
      .set({
        currentRevision: input.revision,
        visibility: input.visibility,
        updatedAt: input.at,
        deletedAt: null,
      })
      .where(eq(collections.id, existing.id));
  } else {
    const [created] = await tx
      .insert(collections)
      .values({
        namespaceId: input.namespaceId,
        name: input.collection,
        visibility: input.visibility,
        currentRevision: input.revision,
        createdAt: input.at,
        updatedAt: input.at,
      })
      .returning({ id: collections.id });
    if (!created) throw new Error('insert into collections returned no row');
    collectionId = created.id;
  }
  const popularity = existing?.popularity ?? 0;

  await tx
    .insert(collectionRevisions)
    .values({
      collectionId,
      revision: input.revision,
      manifest: input.manifest,
      skillCount: input.skills.length,
      sizeBytes: input.sizeBytes,
      visibility: input.visibility,
      publishedBy: input.publishedBy,
      createdAt: input.at,
    })
    .onConflictDoNothing();

  for (const batch of batches(input.skills, (s) => s.body.length)) {
    const rows = batch.map((s) => ({
      identity: s.identity,
      source: 'hub',
      collectionId,
      owner: input.namespace,
      container: input.collection,
      path: s.path,
      name: s.name,
      description: s.description,
      frontmatter: s.frontmatter,
      body: s.body,
      warnings: s.warnings,
      parseError: null,
      files: s.files,
      flags: s.flags,
      revision: s.revision,
      commit: input.revision,
      descriptionTokens: s.descriptionTokens,
      bodyTokens: s.bodyTokens,
      stars: popularity,
      visibility: input.visibility,
      firstSeenAt: input.at,
      lastSeenAt: input.at,
      updatedAt: input.at,
      goneAt: null,
    }));
    const inserted = await tx
      .insert(skills)
      .values(rows)
      .onConflictDoUpdate({
        target: skills.identity,
        set: {
          collectionId: sql`excluded.collection_id`,
          ...skillContentFromExcluded(),
          owner: sql`excluded.owner`,
          container: sql`excluded.container`,
          parseError: sql`null`,
          visibility: sql`excluded.visibility`,
        },
      })
      .returning({ id: skills.id, identity: skills.identity });
    const idOf = new Map(inserted.map((r) => [r.identity, r.id]));
    await tx
      .insert(skillRevisions)
      .values(
        batch.map((s) => ({
          skillId: idOf.get(s.identity) as number,
          revision: s.revision,
          name: s.name,
          description: s.description,
          frontmatter: s.frontmatter,
          body: s.body,
          files: s.files,
          commit: input.revision,
          createdAt: input.at,
        })),
      )
      .onConflictDoNothing();
    await tx
      .insert(safetyVerdicts)
      .values(
        uniqueBy(batch, (s) => s.revision).map((s) => ({
          contentSha256: s.revision,
          scannerVersion: input.scannerVersion,
          flags: s.flags,
        })),
      )
      .onConflictDoNothing();
  }

  // Skills that were in the collection and are not in this revision are gone (410 to those who may see them).
  const kept = input.skills.map((s) => s.identity);
  await tx
    .update(skills)
    .set({ goneAt: input.at })
    .where(
      and(
        eq(skills.collectionId, collectionId),
        isNull(skills.goneAt),
        kept.length > 0 ? notInArray(skills.identity, kept) : sql`true`,
      ),
    );
  await hideGoneSkills(tx, collectionId, input.visibility);
  return { collectionId, previousRevision, unchanged: false };
}

/**
 * A gone skill keeps the visibility it had when it left, and becomes private when its collection does:
 * a collection going private must not leave its dropped skills public (they would reveal it), and one
 * going public must not publish skills that were dropped while it was private.
 */
async function hideGoneSkills(tx: DbExecutor, collectionId: number, visibility: 'public' | 'private') {
  if (visibility !== 'private') return;
  await tx
    .update(skills)
    .set({ visibility: 'private' })
    .where(and(eq(skills.collectionId, collectionId), sql`${skills.goneAt} is not null`));
}

/** Marks a collection deleted and its skills gone and members-only; false when it was already deleted. */
export async function markCollectionDeleted(
  tx: DbExecutor,
  collectionId: number,
  at: Date,
): Promise<boolean> {
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
  db: DbExecutor,
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
  db: DbExecutor,
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
export async function existingBlobHashes(db: DbExecutor, hashes: string[]): Promise<Set<string>> {
  if (hashes.length === 0) return new Set();
  const rows = await db.select({ sha256: blobs.sha256 }).from(blobs).where(inArray(blobs.sha256, hashes));
  return new Set(rows.map((r) => r.sha256));
}

/** Splits rows into insert batches by count and weight (bytes), so one statement stays a few MiB. */
export function* batches<T>(items: readonly T[], weight: (item: T) => number): Generator<T[]> {
  let batch: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const w = weight(item);
    if (batch.length > 0 && (batch.length >= BATCH_ROWS || bytes + w > BATCH_BYTES)) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(item);
    bytes += w;
  }
  if (batch.length > 0) yield batch;
}

/** The first item per key. */
export function uniqueBy<T>(items: readonly T[], key: (item: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const k = key(item);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
