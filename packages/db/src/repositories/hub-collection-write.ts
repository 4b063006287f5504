import { and, eq, isNull, notInArray, sql } from 'drizzle-orm';
import type { Executor } from '../client.js';
import { blobs, safetyVerdicts } from '../schema/blobs.js';
import { skillRevisions, skills } from '../schema/skills.js';
import { collectionRevisions, collections } from '../schema/teams.js';
import { type SkillRevisionContent, skillContentColumns, skillContentFromExcluded } from './skill-upsert.js';

// Rows per multi-row insert; blob batches are also cut by size so one statement stays a few MiB.
const BATCH_ROWS = 100;
const BATCH_BYTES = 8 * 1024 * 1024;

/** The collection a hub write lands in, and what every skill row written into it takes from it. */
export interface HubCollectionTarget {
  collectionId: number;
  namespace: string;
  collection: string;
  /** The collection's visibility (`public` or `private`), which its skills take. */
  visibility: string;
  popularity: number;
  /** The collection revision (a publish's manifest hash, a linked repository's commit); null in test seeds. */
  commit: string | null;
  at: Date;
}

/** One `hub:` skill whose content is new at this revision. */
export interface HubSkillWrite {
  identity: string;
  /** Folder inside the collection, lowercase ('' for a root skill). */
  path: string;
  revision: string;
  content: SkillRevisionContent;
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

/** Stores blobs content-addressed (what is stored already is kept). */
export async function storeBlobs(
  tx: Executor,
  rows: readonly { sha256: string; size: number; content: Buffer }[],
): Promise<void> {
  // One order for every writer: two crawls storing overlapping blobs in different orders deadlock on the
  // unique index (each waits for the other's uncommitted row); sorted by digest, one simply waits.
  const sorted = uniqueBy(rows, (b) => b.sha256).sort((a, b) =>
    a.sha256 < b.sha256 ? -1 : a.sha256 > b.sha256 ? 1 : 0,
  );
  for (const batch of batches(sorted, (b) => b.size)) {
    await tx.insert(blobs).values(batch).onConflictDoNothing({ target: blobs.sha256 });
  }
}

/**
 * Writes the skills whose content is new at this revision: their rows under the collection (upsert by
 * identity, taking the collection's visibility and popularity), their revision history (`?rev=`) and
 * their safety verdicts. Shared by publishing and linked collections so both write the same columns.
 */
export async function upsertHubSkills(
  tx: Executor,
  target: HubCollectionTarget,
  changed: readonly HubSkillWrite[],
): Promise<void> {
  for (const batch of batches(changed, (s) => s.content.body.length)) {
    const upserted = await tx
      .insert(skills)
      .values(
        batch.map((s) => ({
          identity: s.identity,
          source: 'hub',
          collectionId: target.collectionId,
          owner: target.namespace,
          container: target.collection,
          path: s.path,
          ...skillContentColumns(s.content),
          revision: s.revision,
          commit: target.commit,
          stars: target.popularity,
          visibility: target.visibility,
          firstSeenAt: target.at,
          lastSeenAt: target.at,
          updatedAt: target.at,
          goneAt: null,
        })),
      )
      .onConflictDoUpdate({
        target: skills.identity,
        set: {
          collectionId: sql`excluded.collection_id`,
          ...skillContentFromExcluded(),
          owner: sql`excluded.owner`,
          container: sql`excluded.container`,
          parseError: sql`excluded.parse_error`,
          visibility: sql`excluded.visibility`,
        },
      })
      .returning({ id: skills.id, identity: skills.identity });
    const idOf = new Map(upserted.map((r) => [r.identity, r.id]));
    await tx
      .insert(skillRevisions)
      .values(
        batch.map((s) => ({
          skillId: idOf.get(s.identity) as number,
          revision: s.revision,
          name: s.content.name,
          description: s.content.description,
          frontmatter: s.content.frontmatter,
          body: s.content.body,
          files: s.content.files,
          commit: target.commit,
          createdAt: target.at,
        })),
      )
      .onConflictDoNothing();
    const verdicts = uniqueBy(
      batch.filter((s) => s.content.verdict),
      (s) => s.content.verdict?.contentSha256 ?? '',
    ).map((s) => ({
      contentSha256: s.content.verdict?.contentSha256 as string,
      scannerVersion: s.content.verdict?.scannerVersion as string,
      flags: s.content.flags,
    }));
    if (verdicts.length > 0) await tx.insert(safetyVerdicts).values(verdicts).onConflictDoNothing();
  }
}

/** Skills that were in the collection and are not in this revision are gone (410 to those who may see them). */
export async function markHubSkillsGone(
  tx: Executor,
  collectionId: number,
  kept: readonly string[],
  at: Date,
): Promise<void> {
  await tx
    .update(skills)
    .set({ goneAt: at, updatedAt: at })
    .where(
      and(
        eq(skills.collectionId, collectionId),
        isNull(skills.goneAt),
        kept.length > 0 ? notInArray(skills.identity, [...kept]) : sql`true`,
      ),
    );
}

/** Records one revision of a collection (its manifest and size); a revision recorded already is kept. */
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
    .onConflictDoNothing();
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
