import type { SafetyFinding } from '@atskills/protocol';
import type { Executor } from '../client.js';
import type { SkillFile } from '../schema/skills.js';
import { storeBlobs } from './blobs.js';
import {
  findCollectionRow,
  insertCollectionRevision,
  lockCollectionPublish,
  markCollectionRowDeleted,
  saveCollectionRow,
  setCollectionVisibility,
} from './collections.js';
import {
  hideGoneSkills,
  markCollectionSkillsDeleted,
  markHubSkillsGone,
  setLiveCollectionSkillsVisibility,
  upsertHubSkills,
} from './skills/hub.js';

// A publish and a deletion of a `hub:` collection, each a list of steps over the table families
// (collections and their revisions, skills and theirs, blobs and verdicts); the SQL of each step is in its
// family's file. The caller opens the transaction.

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
  /** The collection's visibility before this publish (null when new or deleted). */
  previousVisibility: 'public' | 'private' | null;
  unchanged: boolean;
}

/**
 * Stores a validated publish: blobs, the collection revision, one row per skill (current) plus its
 * revision history, and marks skills that left the collection gone. Run it inside a transaction; a
 * concurrent publish of the same collection waits on an advisory lock so revisions never interleave.
 */
export async function writePublish(tx: Executor, input: PublishWrite): Promise<PublishOutcome> {
  // The lock before the read: a concurrent publish reads the collection only once this one committed.
  await lockCollectionPublish(tx, input.namespace, input.collection);
  const existing = await findCollectionRow(tx, input.namespaceId, input.collection);
  const previousRevision = existing?.currentRevision ?? null;
  const previousVisibility =
    existing && !existing.deletedAt ? (existing.visibility as 'public' | 'private') : null;

  if (existing && !existing.deletedAt && existing.currentRevision === input.revision) {
    // Identical content: no new revision. A visibility change alone still applies.
    if (existing.visibility !== input.visibility) {
      await setCollectionVisibility(tx, existing.id, input.visibility, input.at);
      await setLiveCollectionSkillsVisibility(tx, existing.id, input.visibility);
      await hideGoneSkills(tx, existing.id, input.visibility);
    }
    return { collectionId: existing.id, previousRevision, previousVisibility, unchanged: true };
  }

  // Blobs first (in digest order, see storeBlobs): the manifest and skill rows name them.
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
  // After the upsert, so only skills this revision no longer holds are marked gone, then hidden.
  await markHubSkillsGone(
    tx,
    collectionId,
    input.skills.map((s) => s.identity),
    input.at,
  );
  await hideGoneSkills(tx, collectionId, input.visibility);
  return { collectionId, previousRevision, previousVisibility, unchanged: false };
}

/** Marks a collection deleted and its skills gone and members-only; false when it was already deleted. */
export async function markCollectionDeleted(tx: Executor, collectionId: number, at: Date): Promise<boolean> {
  if (!(await markCollectionRowDeleted(tx, collectionId, at))) return false;
  await markCollectionSkillsDeleted(tx, collectionId, at);
  return true;
}
