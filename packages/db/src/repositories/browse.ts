import { and, asc, desc, eq, gt, isNull, type SQL, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { repositories } from '../schema/repositories.js';
import { skills } from '../schema/skills.js';
import { skillUses } from '../schema/uses.js';
import { latestCrawlRun } from './crawls.js';
import { type ReadScope, visibleTo } from './scope.js';
import type { SearchRow } from './search.js';

// Browse reads over `skills` (and `skill_uses`): what the browsing pages (home, owner pages, feeds), the
// discovery index and the corpus counts read: each list is one grouped or ordered statement
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

/** A live hub skill as the discovery index and the MCP skills extension list it. */
export interface HubSkillEntry {
  identity: string;
  owner: string;
  container: string;
  path: string;
  revision: string;
  name: string;
  description: string;
  frontmatter: Record<string, unknown>;
  files: (typeof skills.$inferSelect)['files'];
  flags: (typeof skills.$inferSelect)['flags'];
}

/**
 * Live `hub:` skills that parsed, which the scope may read, ordered by identity: at most `limit` after the
 * identity `after` (a keyset page), optionally of one namespace and collection.
 */
export async function listHubSkillEntries(
  db: Database,
  scope: ReadScope,
  options: { after?: string; limit: number; namespace?: string; collection?: string },
): Promise<HubSkillEntry[]> {
  const where: (SQL | undefined)[] = [
    eq(skills.source, 'hub'),
    isNull(skills.goneAt),
    isNull(skills.parseError),
    visibleTo(scope, skills.visibility, skills.owner),
  ];
  if (options.after !== undefined) where.push(gt(skills.identity, options.after));
  if (options.namespace !== undefined) where.push(eq(skills.owner, options.namespace.toLowerCase()));
  if (options.collection !== undefined) where.push(eq(skills.container, options.collection.toLowerCase()));
  return db
    .select({
      identity: skills.identity,
      owner: skills.owner,
      container: skills.container,
      path: skills.path,
      revision: skills.revision,
      name: skills.name,
      description: skills.description,
      frontmatter: skills.frontmatter,
      files: skills.files,
      flags: skills.flags,
    })
    .from(skills)
    .where(and(...where))
    .orderBy(asc(skills.identity))
    .limit(options.limit);
}

/** Corpus size as the scope sees it (private rows it may not read are not counted) and the last crawl. */
export async function corpusStats(db: Database, scope: ReadScope) {
  const [counts] = await db
    .select({
      skills: sql<number>`count(*) filter (where ${skills.goneAt} is null)::int`,
      gone: sql<number>`count(*) filter (where ${skills.goneAt} is not null)::int`,
      repositories: sql<number>`count(distinct ${skills.repositoryId}) filter (where ${skills.goneAt} is null)::int`,
      collections: sql<number>`count(distinct ${skills.collectionId}) filter (where ${skills.goneAt} is null)::int`,
    })
    .from(skills)
    .where(visibleTo(scope, skills.visibility, skills.owner));
  const lastCrawl = await latestCrawlRun(db);
  return {
    skills: counts?.skills ?? 0,
    gone: counts?.gone ?? 0,
    repositories: counts?.repositories ?? 0,
    collections: counts?.collections ?? 0,
    lastCrawl: lastCrawl ?? null,
  };
}
