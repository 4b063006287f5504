import type { SafetyFinding } from '@atskills/protocol';
import { and, asc, desc, eq, inArray, isNull, type SQL, sql } from 'drizzle-orm';
import type { Database } from '../../client.js';
import { repositories } from '../../schema/repositories.js';
import { skillRevisions, skills, skillTombstones } from '../../schema/skills.js';
import { collectionRevisions } from '../../schema/teams.js';
import { type ReadScope, visibleTo } from '../scope.js';

// Table family `skills` and `skill_revisions` (src/schema/skills.ts), read side: a skill or folder by
// location or identity, its stored revisions, what a resolution or revalidation needs of it.

/** Where a skill or folder lives: `source:owner/container[/path]`. */
export interface SkillLocation {
  source: 'gh' | 'hub';
  owner: string;
  container: string;
  /** Folder path inside the container, '' for its root. */
  path: string;
}

/** A skill row as the read side uses it. */
export type SkillRow = typeof skills.$inferSelect;

/** The columns a menu or a lookup needs of each skill under a folder. */
export interface SkillListing {
  id: number;
  identity: string;
  path: string;
  name: string;
  description: string;
  revision: string;
  goneAt: Date | null;
  parseError: { code: string; message: string } | null;
  visibility: string;
}

// GitHub owner and repository names are case-insensitive (identities keep the case they were found with),
// so a gh: location is first mapped to the stored spelling through the repositories table's
// lower(owner), lower(name) index (an InitPlan evaluated once); the skills lookup then uses the plain
// (owner, container, path) index instead of scanning for lower(...). Hub namespaces and collections are
// stored lowercase. Paths are case-sensitive in both.
function containerIs(loc: Pick<SkillLocation, 'source' | 'owner' | 'container'>): SQL {
  if (loc.source === 'hub') {
    return and(
      eq(skills.source, 'hub'),
      eq(skills.owner, loc.owner.toLowerCase()),
      eq(skills.container, loc.container.toLowerCase()),
    ) as SQL;
  }
  return and(
    eq(skills.source, 'gh'),
    // The spelling as given (canonical identities), or the stored spelling of a differently-cased one.
    sql`((${skills.owner} = ${loc.owner} and ${skills.container} = ${loc.container}) or (${skills.owner}, ${skills.container}) = (select r.owner, r.name from ${repositories} r where lower(r.owner) = lower(${loc.owner}) and lower(r.name) = lower(${loc.container})))`,
  ) as SQL;
}

/** SQL: `path` is `folder` itself or below it (no LIKE, so `%` and `_` in paths mean themselves). */
function atOrUnder(folder: string): SQL {
  if (folder === '') return sql`true`;
  return sql`(${skills.path} = ${folder} or left(${skills.path}, ${folder.length + 1}) = ${`${folder}/`})`;
}

/**
 * Every skill the scope may see at or under a folder, gone ones included (so a lookup can answer 410),
 * sorted by path. Folders of thousands of skills only cost small rows.
 */
export async function listSkillsAtOrUnder(
  db: Database,
  scope: ReadScope,
  loc: SkillLocation,
): Promise<SkillListing[]> {
  return db
    .select({
      id: skills.id,
      identity: skills.identity,
      path: skills.path,
      name: skills.name,
      description: skills.description,
      revision: skills.revision,
      goneAt: skills.goneAt,
      parseError: skills.parseError,
      visibility: skills.visibility,
    })
    .from(skills)
    .where(and(containerIs(loc), atOrUnder(loc.path), visibleTo(scope, skills.visibility, skills.owner)))
    .orderBy(asc(skills.path));
}

/** One skill row by its location, if the scope may see it (gone rows included). */
export async function findSkillAt(
  db: Database,
  scope: ReadScope,
  loc: SkillLocation,
): Promise<SkillRow | undefined> {
  const rows = await db
    .select()
    .from(skills)
    .where(
      and(containerIs(loc), eq(skills.path, loc.path), visibleTo(scope, skills.visibility, skills.owner)),
    )
    .limit(1);
  return rows[0];
}

/** A stored revision of a skill (`?rev=`), or undefined. */
export async function findSkillRevision(
  db: Database,
  skillId: number,
  revision: string,
): Promise<(typeof skillRevisions.$inferSelect & { publishedVisibility: string | null }) | undefined> {
  const rows = await db
    .select({
      revision: skillRevisions,
      // A published (hub:) revision is as private as the collection revision it came with (SPEC 2.3).
      // Qualified by hand: drizzle leaves the columns of a one-table select unqualified, and skills has a
      // commit column of its own.
      publishedVisibility: sql<string | null>`(select cr.visibility from collection_revisions cr
        join skills s on s.collection_id = cr.collection_id
        where s.id = "skill_revisions"."skill_id" and cr.revision = "skill_revisions"."commit" limit 1)`,
    })
    .from(skillRevisions)
    .where(and(eq(skillRevisions.skillId, skillId), eq(skillRevisions.revision, revision)))
    .limit(1);
  const row = rows[0];
  return row ? { ...row.revision, publishedVisibility: row.publishedVisibility } : undefined;
}

/** Every current (not gone) skill row of one repository or collection, all visibilities (index sync). */
export async function listContainerSkills(
  db: Database,
  loc: Pick<SkillLocation, 'source' | 'owner' | 'container'>,
): Promise<SkillRow[]> {
  return db
    .select()
    .from(skills)
    .where(and(containerIs(loc), isNull(skills.goneAt)))
    .orderBy(asc(skills.path));
}

/**
 * The distinct repositories/collections holding skills, optionally only those of some identities (with the
 * containers identities were left from, so an engine replacing a container's documents drops them).
 */
export async function listSkillContainers(
  db: Database,
  identities?: string[],
): Promise<{ source: 'gh' | 'hub'; owner: string; container: string }[]> {
  const held = db
    .selectDistinct({ source: skills.source, owner: skills.owner, container: skills.container })
    .from(skills)
    .where(identities ? inArray(skills.identity, identities) : sql`true`);
  // An identity a skill left (deleted, or its repository moved) names the container it was in.
  const rows = identities?.length
    ? await held.union(
        db
          .select({
            source: skillTombstones.source,
            owner: skillTombstones.owner,
            container: skillTombstones.container,
          })
          .from(skillTombstones)
          .where(inArray(skillTombstones.identity, identities)),
      )
    : await held;
  return rows as { source: 'gh' | 'hub'; owner: string; container: string }[];
}

/**
 * The current revision of a live skill the scope may read, by its exact stored identity: one indexed
 * lookup of three small columns. The revision probe's fast path (If-None-Match); anything else (folders,
 * gone skills, other spellings of an identity) takes the full resolution.
 */
export async function findLiveSkillRevision(
  db: Database,
  scope: ReadScope,
  identity: string,
): Promise<{ revision: string; flags: SafetyFinding[] } | undefined> {
  const rows = await db
    .select({ revision: skills.revision, flags: skills.flags })
    .from(skills)
    .where(and(eq(skills.identity, identity), liveAndVisible(scope)))
    .limit(1);
  return rows[0];
}

/**
 * The stored findings (evidence included) of the skills among `identities` (exact stored identities) that
 * the scope may read, in one indexed query (an empty list for a skill without findings).
 */
export async function findSkillFindings(
  db: Database,
  scope: ReadScope,
  identities: string[],
): Promise<Map<string, SafetyFinding[]>> {
  if (identities.length === 0) return new Map();
  const rows = await db
    .select({ identity: skills.identity, flags: skills.flags })
    .from(skills)
    .where(
      and(
        inArray(skills.identity, [...new Set(identities)]),
        visibleTo(scope, skills.visibility, skills.owner),
      ),
    );
  return new Map(rows.map((r) => [r.identity, r.flags]));
}

/** SQL condition: the skill is live (not gone upstream) and the scope may read it. */
function liveAndVisible(scope: ReadScope): SQL | undefined {
  return and(isNull(skills.goneAt), visibleTo(scope, skills.visibility, skills.owner));
}

/** What a batch revalidation answers for a live skill: its revision, and its frontmatter when it changed. */
export interface LiveSkillSummary {
  identity: string;
  revision: string;
  name: string;
  description: string;
  frontmatter: Record<string, unknown>;
  flags: SafetyFinding[];
}

/**
 * The live skills among `identities` (exact stored identities) the scope may read, in one indexed query:
 * the fast path of POST /v1/resolve. Identities not returned (folders, gone, unknown, private) take the full
 * resolution one by one.
 */
export async function findLiveSkillSummaries(
  db: Database,
  scope: ReadScope,
  identities: string[],
): Promise<LiveSkillSummary[]> {
  if (identities.length === 0) return [];
  const rows = await db
    .select({
      identity: skills.identity,
      revision: skills.revision,
      name: skills.name,
      description: skills.description,
      frontmatter: skills.frontmatter,
      flags: skills.flags,
    })
    .from(skills)
    // One array parameter, not one per identity: the statement text (and its plan) is the same for any batch.
    .where(and(sql`${skills.identity} = any(${sql.param(identities)}::text[])`, liveAndVisible(scope)));
  return rows as LiveSkillSummary[];
}

/** One stored revision of a skill, for the history list. */
export interface SkillRevisionEntry {
  revision: string;
  /** The commit (gh:) or collection revision (hub:) it came with. */
  commit: string | null;
  createdAt: Date;
  /** Whether it is the skill's current revision. */
  current: boolean;
}

/**
 * The stored revisions of a skill, newest first. A hub revision published while its collection was private
 * stays hidden from a scope that may not read the namespace (as `?rev=` does), unless it is the current one.
 */
export async function listSkillRevisions(
  db: Database,
  scope: ReadScope,
  skillId: number,
  limit: number,
): Promise<SkillRevisionEntry[]> {
  const readsPrivately = scope.isAdmin
    ? sql`true`
    : sql`lower(s.owner) = any(${sql.param(scope.readableNamespaces.map((n) => n.toLowerCase()))}::text[])`;
  // Qualified by hand inside the subquery: drizzle leaves a one-table select's columns unqualified, and
  // skills and collection_revisions have columns of the same names.
  return db
    .select({
      revision: skillRevisions.revision,
      commit: skillRevisions.commit,
      createdAt: skillRevisions.createdAt,
      current: sql<boolean>`exists (select 1 from ${skills} cur where cur.id = "skill_revisions"."skill_id" and cur.revision = "skill_revisions"."revision")`,
    })
    .from(skillRevisions)
    .where(
      and(
        eq(skillRevisions.skillId, skillId),
        // The current revision is what the skill page shows anyway, even when the same content first came
        // with a private collection revision.
        sql`(exists (select 1 from ${skills} cur where cur.id = "skill_revisions"."skill_id" and cur.revision = "skill_revisions"."revision")
          or not exists (select 1 from ${collectionRevisions} cr join ${skills} s on s.collection_id = cr.collection_id
          where s.id = "skill_revisions"."skill_id" and cr.revision = "skill_revisions"."commit"
          and cr.visibility = 'private' and not (${readsPrivately})))`,
      ),
    )
    .orderBy(desc(skillRevisions.createdAt), desc(skillRevisions.revision))
    .limit(limit);
}

/** The ids of skills by canonical identity (unknown identities are left out). */
export async function skillIdsByIdentity(db: Database, identities: string[]): Promise<Map<string, number>> {
  if (identities.length === 0) return new Map();
  const rows = await db
    .select({ id: skills.id, identity: skills.identity })
    .from(skills)
    .where(inArray(skills.identity, identities));
  return new Map(rows.map((r) => [r.identity, r.id]));
}
