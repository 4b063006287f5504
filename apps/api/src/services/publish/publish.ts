import {
  appendAudit,
  contentVerdictsFor,
  type Database,
  findCollection,
  findNamespace,
  listCollectionRevisions,
  markCollectionDeleted,
  type NamespaceRow,
  popularPublicCollections,
  suppressionsFor,
  withContentVerdict,
  writePublish,
} from '@atskills/db';
import { formatIdentity, type SafetyFinding, SCANNER_VERSION } from '@atskills/protocol';
import { problem } from '../../problems.js';
import { checkAccountName, checkCollectionName } from '../auth/names.js';
import { canPublishTo, requireScope } from '../auth/permissions.js';
import type { Viewer } from '../auth/viewer.js';
import { refuseIfLinked } from '../links/links.js';
import { extractArchive } from './extract-archive.js';
import type { PublishLimits } from './limits.js';
import { findLookalikes } from './lookalike.js';
import { type ValidatedCollection, validateCollection } from './validate-collection.js';

/** How many popular public collections look-alike protection compares a new name against. */
const LOOKALIKE_CANDIDATES = 1000;

/** What `PUT /v1/collections/<namespace>/<collection>` answers. */
export interface PublishAnswer {
  identity: string;
  revision: string;
  previousRevision: string | null;
  unchanged: boolean;
  visibility: 'public' | 'private';
  /** Null for a new (or deleted) collection; differs from `visibility` when this publish changed it. */
  previousVisibility: 'public' | 'private' | null;
  skills: string[];
  warnings: { code: string; message: string; path?: string }[];
}

/** Who publishes, where, and the request it came in. */
export interface PublishContext {
  viewer: Viewer;
  namespace: string;
  collection: string;
  requestId: string;
  now: Date;
}

/** A publish target after authorization. */
export interface PublishTarget {
  namespace: NamespaceRow;
  collection: string;
}

/**
 * Checks that the caller may publish to (or delete from) `namespace/collection`, before any body is read:
 * 401 without a token, 403 without the publish scope or a publishing role. The 403 reads the same whether
 * or not the namespace exists, so it reveals nothing.
 */
export async function authorizePublish(
  db: Database,
  viewer: Viewer,
  rawNamespace: string,
  rawCollection: string,
): Promise<PublishTarget> {
  const namespaceName = checkAccountName(rawNamespace, 'namespace');
  const collection = checkCollectionName(rawCollection);
  requireScope(viewer, 'publish');
  const namespace = await findNamespace(db, namespaceName);
  if (!namespace || !canPublishTo(viewer, namespaceName)) {
    throw problem(
      'forbidden',
      `You may not publish to ${formatIdentity('hub', namespaceName)}; an owner of "${namespaceName}" can give you the publisher role.`,
    );
  }
  return { namespace, collection };
}

/**
 * Publishes a gzip tar as the new revision of a collection. Everything is checked in memory first; the
 * database sees one transaction at the end, so a refused or failed publish stores nothing.
 */
export async function publishCollection(
  db: Database,
  ctx: PublishContext & { visibility: 'public' | 'private'; body: Buffer; limits: PublishLimits },
): Promise<PublishAnswer> {
  const target = await authorizePublish(db, ctx.viewer, ctx.namespace, ctx.collection);
  await refuseIfLinked(db, target.namespace.name, target.collection);
  const names = { namespace: target.namespace.name, collection: target.collection };
  const archive = await extractArchive(ctx.body, ctx.limits);
  const validated = await validateCollection(archive, names, ctx.limits);
  const identity = formatIdentity('hub', `${names.namespace}/${names.collection}`);
  const flagsBySkill = await withSuppressions(db, validated);
  const warnings = [...validated.warnings];
  for (const s of validated.skills) {
    const flags = flagsBySkill.get(s.identity) ?? [];
    if (flags.length > 0) {
      const rules = [...new Set(flags.map((f) => f.rule))].join(', ');
      warnings.push({
        code: 'safety-flags',
        path: s.identity,
        message: `${s.identity}: ${flags.length} safety flag${flags.length > 1 ? 's' : ''} (${rules}); readers will see them.`,
      });
    }
  }
  const lookalikes = findLookalikes(
    `${names.namespace}/${names.collection}`,
    await popularPublicCollections(db, {
      excludeNamespaceId: target.namespace.id,
      minPopularity: 0,
      limit: LOOKALIKE_CANDIDATES,
    }),
  );
  for (const hit of lookalikes.slice(0, 3)) {
    warnings.push({
      code: 'look-alike',
      message: `${identity} looks like the popular collection ${formatIdentity('hub', hit.fullName)}; readers may confuse the two.`,
    });
  }

  const outcome = await db.transaction(async (tx) => {
    const result = await writePublish(tx, {
      namespaceId: target.namespace.id,
      namespace: names.namespace,
      collection: names.collection,
      visibility: ctx.visibility,
      revision: validated.revision,
      manifest: validated.manifest,
      sizeBytes: validated.sizeBytes,
      skills: validated.skills.map((s) => ({
        identity: s.identity,
        path: s.path,
        name: s.name,
        description: s.description,
        frontmatter: s.frontmatter,
        body: s.body,
        warnings: [],
        files: s.files.map(({ path, size, sha256 }) => ({ path, size, sha256 })),
        revision: s.revision,
        flags: flagsBySkill.get(s.identity) ?? [],
        descriptionTokens: s.descriptionTokens,
        bodyTokens: s.bodyTokens,
      })),
      blobs: [...validated.blobs].map(([sha256, content]) => ({ sha256, size: content.length, content })),
      publishedBy: ctx.viewer.userId,
      at: ctx.now,
      scannerVersion: SCANNER_VERSION,
    });
    await appendAudit(tx, {
      namespaceId: target.namespace.id,
      actorUserId: ctx.viewer.userId,
      action: 'collection.publish',
      target: identity,
      details: {
        revision: validated.revision,
        previousRevision: result.previousRevision,
        unchanged: result.unchanged,
        visibility: ctx.visibility,
        previousVisibility: result.previousVisibility,
        skills: validated.skills.length,
        bytes: validated.sizeBytes,
      },
      requestId: ctx.requestId,
      at: ctx.now,
    });
    return result;
  });

  return {
    identity,
    revision: validated.revision,
    previousRevision: outcome.previousRevision,
    unchanged: outcome.unchanged,
    visibility: ctx.visibility,
    previousVisibility: outcome.previousVisibility,
    skills: validated.skills.map((s) => s.identity),
    warnings,
  };
}

/** Deletes a collection: its identities answer 410 to those who may see them; revisions stay stored. */
export async function deleteCollection(
  db: Database,
  ctx: PublishContext,
): Promise<{ identity: string; deleted: true; lastRevision: string | null }> {
  const target = await authorizePublish(db, ctx.viewer, ctx.namespace, ctx.collection);
  await refuseIfLinked(db, target.namespace.name, target.collection);
  const identity = formatIdentity('hub', `${target.namespace.name}/${target.collection}`);
  return db.transaction(async (tx) => {
    const found = await findCollection(tx, target.namespace.name, target.collection);
    if (!found || found.deletedAt || !(await markCollectionDeleted(tx, found.id, ctx.now))) {
      throw problem('not-found', `No collection ${identity}.`);
    }
    await appendAudit(tx, {
      namespaceId: target.namespace.id,
      actorUserId: ctx.viewer.userId,
      action: 'collection.delete',
      target: identity,
      details: { lastRevision: found.currentRevision },
      requestId: ctx.requestId,
      at: ctx.now,
    });
    return { identity, deleted: true as const, lastRevision: found.currentRevision };
  });
}

/** A collection's revisions, newest first; 404 (the same as for a missing one) when the viewer may not see it. */
export async function collectionRevisions(
  db: Database,
  viewer: Viewer,
  rawNamespace: string,
  rawCollection: string,
) {
  const namespace = rawNamespace.toLowerCase();
  const name = rawCollection.toLowerCase();
  const identity = formatIdentity('hub', `${namespace}/${name}`);
  const found = await findCollection(db, namespace, name);
  const member =
    found !== undefined && (viewer.isAdmin || viewer.readableNamespaces.includes(found.namespace));
  // A deleted collection is 404 to non-members, like a name that never existed.
  const visible = member || (found?.visibility === 'public' && !found.deletedAt);
  if (!found || !visible) throw problem('not-found', `No collection ${identity}.`);
  // A revision's metadata is as private as its content (SPEC 2.3): revisions published while the collection
  // was private stay hidden from non-members after it goes public.
  // The current revision is what a reader of the collection is served, so whoever sees the collection sees
  // it listed, even when its content was first published while private.
  const revisions = (await listCollectionRevisions(db, found.id)).filter(
    (r) => member || r.visibility === 'public' || r.revision === found.currentRevision,
  );
  return {
    identity,
    visibility: found.visibility as 'public' | 'private',
    currentRevision: found.currentRevision,
    deletedAt: found.deletedAt?.toISOString() ?? null,
    revisions: revisions.map((r) => ({
      revision: r.revision,
      skillCount: r.skillCount,
      sizeBytes: r.sizeBytes,
      visibility: r.visibility as 'public' | 'private',
      publishedBy: r.publishedBy,
      publishedAt: r.createdAt.toISOString(),
    })),
  };
}

/**
 * Marks the flags an accepted dispute suppressed for exactly this content and adds an accepted "malicious"
 * verdict on it (a re-publish of identical content keeps both decisions; any change is a new content hash,
 * scanned afresh).
 */
async function withSuppressions(
  db: Database,
  validated: ValidatedCollection,
): Promise<Map<string, SafetyFinding[]>> {
  const flags = new Map<string, SafetyFinding[]>(validated.skills.map((s) => [s.identity, s.flags]));
  const hashOf = new Map(validated.skills.map((s) => [s.identity, s.contentHash]));
  const [suppressed, verdicts] = await Promise.all([
    suppressionsFor(db, [...hashOf.values()]),
    contentVerdictsFor(db, [...hashOf.values()]),
  ]);
  if (suppressed.size === 0 && verdicts.size === 0) return flags;
  const out = new Map<string, SafetyFinding[]>();
  for (const [identity, list] of flags) {
    const hash = hashOf.get(identity) ?? '';
    const rules = suppressed.get(hash);
    const kept = list.map((f) => {
      const by = rules?.get(f.rule);
      return by === undefined || by === null ? f : { ...f, suppressedBy: by };
    });
    out.set(identity, withContentVerdict(kept, verdicts.get(hash)));
  }
  return out;
}
