import { and, desc, eq, isNull, type SQL, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { repositories } from '../schema/repositories.js';
import { skillRevisions, skills } from '../schema/skills.js';
import { collectionRevisions } from '../schema/teams.js';
import { skillUses } from '../schema/uses.js';
import { type ReadScope, visibleTo } from './read-scope.js';
import type { SearchRow } from './read-search.js';

// What the browsing pages (home, owner pages, feeds) read: each list is one grouped or ordered statement
// over the live, parseable skills the scope may see, so a page costs a handful of queries whatever it shows.

/** An owner (gh) or namespace (hub) and how much it holds. */
export interface OwnerSummary {
  source: 'gh' | 'hub';
  owner: string;
  containers: number;
  skills: number;
}

/** A repository (gh) or collection (hub) and how much it holds. */
export interface ContainerSummary {
  source: 'gh' | 'hub';
  owner: string;
  container: string;
  skills: number;
  stars: number;
  updatedAt: Date;
}

/** A skill as a browsing list shows it: what a search row says of it, and when it came and last changed. */
export type SkillSummary = Pick<
  SearchRow,
  'identity' | 'source' | 'owner' | 'container' | 'path' | 'name' | 'description' | 'revision' | 'stars'
> & { firstSeenAt: Date; updatedAt: Date };

/** Which skills a browsing list reads: one source, optionally one owner or namespace. */
export interface BrowseFilter {
  source?: 'gh' | 'hub';
  /** A gh owner (any case) or a hub namespace; needs `source`. */
  owner?: string;
}

/** Live (not gone), parseable (as in search) and visible to the scope. */
function listed(scope: ReadScope): SQL {
  return and(
    isNull(skills.goneAt),
    isNull(skills.parseError),
    visibleTo(scope, skills.visibility, skills.owner),
  ) as SQL;
}

// GitHub owners are case-insensitive while skills keep the stored spelling: the spelling as given plus the
// stored spellings from the repositories table's lower(owner) index, so the skills lookup keeps its plain
// owner index.
function ownerIs(filter: BrowseFilter): SQL {
  const parts: SQL[] = [];
  if (filter.source) parts.push(sql`${skills.source} = ${filter.source}`);
  if (filter.owner !== undefined) {
    if (filter.source === 'hub') parts.push(sql`${skills.owner} = ${filter.owner.toLowerCase()}`);
    else
      parts.push(
        // `= any(array(...))` is one InitPlan whose result the owner index is probed with; an OR of the two
        // spellings would scan every skill.
        sql`${skills.owner} = any(array(select ${filter.owner}::text union select r.owner from ${repositories} r where lower(r.owner) = lower(${filter.owner})))`,
      );
  }
  return parts.length === 0 ? sql`true` : (and(...parts) as SQL);
}

const SUMMARY_COLUMNS = {
  identity: skills.identity,
  source: sql<'gh' | 'hub'>`${skills.source}`,
  owner: skills.owner,
  container: skills.container,
  path: skills.path,
  name: skills.name,
  description: skills.description,
  revision: skills.revision,
  stars: skills.stars,
  firstSeenAt: skills.firstSeenAt,
  updatedAt: skills.updatedAt,
};

/** Owners and namespaces with the most listed skills, largest first. */
export async function listOwners(db: Database, scope: ReadScope, limit: number): Promise<OwnerSummary[]> {
  const rows = await db
    .select({
      source: sql<'gh' | 'hub'>`${skills.source}`,
      owner: skills.owner,
      containers: sql<number>`count(distinct ${skills.container})::int`,
      skills: sql<number>`count(*)::int`,
    })
    .from(skills)
    .where(listed(scope))
    .groupBy(skills.source, skills.owner)
    .orderBy(desc(sql`count(*)`), skills.owner)
    .limit(limit);
  return rows;
}

/** Repositories and collections with the most listed skills (optionally of one owner), largest first. */
export async function listContainers(
  db: Database,
  scope: ReadScope,
  filter: BrowseFilter,
  limit: number,
): Promise<ContainerSummary[]> {
  const rows = await db
    .select({
      source: sql<'gh' | 'hub'>`${skills.source}`,
      owner: skills.owner,
      container: skills.container,
      skills: sql<number>`count(*)::int`,
      stars: sql<number>`max(${skills.stars})::int`,
      updatedAt: sql<Date>`max(${skills.updatedAt})`,
    })
    .from(skills)
    .where(and(listed(scope), ownerIs(filter)))
    .groupBy(skills.source, skills.owner, skills.container)
    .orderBy(desc(sql`count(*)`), skills.owner, skills.container)
    .limit(limit);
  return rows.map((r) => ({ ...r, updatedAt: new Date(r.updatedAt) }));
}

/** Listed skills newest first, by when they were first seen (`added`) or last changed (`updated`). */
export async function listRecentSkills(
  db: Database,
  scope: ReadScope,
  filter: BrowseFilter,
  order: 'added' | 'updated',
  limit: number,
): Promise<SkillSummary[]> {
  const column = order === 'added' ? skills.firstSeenAt : skills.updatedAt;
  const rows = await db
    .select(SUMMARY_COLUMNS)
    .from(skills)
    .where(and(listed(scope), ownerIs(filter)))
    .orderBy(desc(column), skills.identity)
    .limit(limit);
  return rows;
}

/** Listed skills with the most uses in the 7 days up to `today`, with that count; skills without uses left out. */
export async function listMostUsedSkills(
  db: Database,
  scope: ReadScope,
  today: string,
  limit: number,
): Promise<(SkillSummary & { weekUses: number })[]> {
  // The week's rows first (skill_uses_day_idx), summed per skill, then joined to the few skills that lead.
  const week = db
    .select({
      skillId: skillUses.skillId,
      weekUses: sql<number>`sum(${skillUses.uses})::int`.as('week_uses'),
    })
    .from(skillUses)
    .where(sql`${skillUses.day} > ${today}::date - 7 and ${skillUses.day} <= ${today}::date`)
    .groupBy(skillUses.skillId)
    .as('week');
  const rows = await db
    .select({ ...SUMMARY_COLUMNS, weekUses: week.weekUses })
    .from(week)
    .innerJoin(skills, eq(skills.id, week.skillId))
    .where(listed(scope))
    .orderBy(desc(week.weekUses), skills.identity)
    .limit(limit);
  return rows;
}

/** Whether the scope sees any listed skill of a gh owner or hub namespace, and its stored spelling. */
export async function findOwner(
  db: Database,
  scope: ReadScope,
  source: 'gh' | 'hub',
  owner: string,
): Promise<{ owner: string; skills: number; containers: number } | undefined> {
  const rows = await db
    .select({
      owner: skills.owner,
      skills: sql<number>`count(*)::int`,
      containers: sql<number>`count(distinct ${skills.container})::int`,
    })
    .from(skills)
    .where(and(listed(scope), ownerIs({ source, owner })))
    .groupBy(skills.owner)
    .orderBy(desc(sql`count(*)`))
    .limit(1);
  return rows[0];
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
