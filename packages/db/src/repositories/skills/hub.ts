import { and, eq, inArray, isNull, notInArray, sql } from 'drizzle-orm';
import type { Executor } from '../../client.js';
import { type SkillFile, skillRevisions, skills } from '../../schema/skills.js';
import { batches, uniqueBy } from '../batches.js';
import { insertHubVerdicts } from '../blobs.js';
import { type SkillRevisionContent, skillContentColumns, skillContentFromExcluded } from './content.js';

// Table family `skills` and `skill_revisions`, hub side: the `hub:` skill rows of one collection, as a
// publish, a linked repository's index, a failing link or a deletion writes them.

/** The warning a linked skill carries while its link fails and members read the last good revision. */
export const LINK_STALE_WARNING = 'link-stale';

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
    await insertHubVerdicts(
      tx,
      uniqueBy(
        batch.filter((s) => s.content.verdict),
        (s) => s.content.verdict?.contentSha256 ?? '',
      ).map((s) => ({
        contentSha256: s.content.verdict?.contentSha256 as string,
        scannerVersion: s.content.verdict?.scannerVersion as string,
        flags: s.content.flags,
      })),
    );
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

/** Gives the live skills of a collection its new visibility (a re-publish of identical content). */
export async function setLiveCollectionSkillsVisibility(
  tx: Executor,
  collectionId: number,
  visibility: 'public' | 'private',
): Promise<void> {
  await tx
    .update(skills)
    .set({ visibility })
    .where(and(eq(skills.collectionId, collectionId), isNull(skills.goneAt)));
}

/**
 * A gone skill keeps the visibility it had when it left, and becomes private when its collection does:
 * a collection going private must not leave its dropped skills public (they would reveal it), and one
 * going public must not publish skills that were dropped while it was private.
 */
export async function hideGoneSkills(tx: Executor, collectionId: number, visibility: 'public' | 'private') {
  if (visibility !== 'private') return;
  await tx
    .update(skills)
    .set({ visibility: 'private' })
    .where(and(eq(skills.collectionId, collectionId), sql`${skills.goneAt} is not null`));
}

/** The skills of a deleted collection: gone, and members-only (410 to members, 404 to everyone else). */
export async function markCollectionSkillsDeleted(
  tx: Executor,
  collectionId: number,
  at: Date,
): Promise<void> {
  await tx
    .update(skills)
    .set({ goneAt: at })
    .where(and(eq(skills.collectionId, collectionId), isNull(skills.goneAt)));
  // Members see 410; everyone else 404, as for a name that never existed (a later publish sets it again).
  await tx.update(skills).set({ visibility: 'private' }).where(eq(skills.collectionId, collectionId));
}

/** The live skills of a linked collection by path: revision and files (decides what to download again). */
export async function storedLinkedSkills(
  db: Executor,
  collectionId: number,
): Promise<Map<string, { identity: string; revision: string; files: SkillFile[] }>> {
  const rows = await db
    .select({ identity: skills.identity, path: skills.path, revision: skills.revision, files: skills.files })
    .from(skills)
    .where(and(eq(skills.collectionId, collectionId), isNull(skills.goneAt)));
  return new Map(rows.map((r) => [r.path, { identity: r.identity, revision: r.revision, files: r.files }]));
}

/** Linked skills unchanged at this commit: seen now, at the commit, and back if they had gone. */
export async function touchLinkedSkills(
  tx: Executor,
  collectionId: number,
  identities: string[],
  commit: string,
  at: Date,
): Promise<void> {
  if (identities.length === 0) return;
  await tx
    .update(skills)
    .set({ lastSeenAt: at, commit, goneAt: null })
    .where(and(eq(skills.collectionId, collectionId), inArray(skills.identity, identities)));
}

/** Adds the stale warning to a failing link's skills (once: a skill that carries it already is left). */
export async function markLinkedSkillsStale(tx: Executor, collectionId: number): Promise<void> {
  await tx
    .update(skills)
    .set({ warnings: sql`${skills.warnings} || ${JSON.stringify([LINK_STALE_WARNING])}::jsonb` })
    .where(and(eq(skills.collectionId, collectionId), sql`not (${skills.warnings} ? ${LINK_STALE_WARNING})`));
}

/** Takes the stale warning off a link's skills (its index succeeded: members read the current commit). */
export async function clearLinkedSkillsStale(tx: Executor, collectionId: number): Promise<void> {
  await tx
    .update(skills)
    .set({ warnings: sql`${skills.warnings} - ${LINK_STALE_WARNING}` })
    .where(and(eq(skills.collectionId, collectionId), sql`${skills.warnings} ? ${LINK_STALE_WARNING}`));
}

/** The live skills of a removed link: gone, without the stale warning (the link is not failing, it is gone). */
export async function markLinkedSkillsGone(tx: Executor, collectionId: number, at: Date): Promise<void> {
  await tx
    .update(skills)
    .set({ goneAt: at, warnings: sql`${skills.warnings} - ${LINK_STALE_WARNING}` })
    .where(and(eq(skills.collectionId, collectionId), isNull(skills.goneAt)));
}
