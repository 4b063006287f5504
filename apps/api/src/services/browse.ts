import {
  type ContainerSummary,
  type Database,
  findOwner,
  listContainers,
  listMostUsedSkills,
  listOwners,
  listRecentSkills,
  listSkillRevisions,
  type OwnerSummary,
  PUBLIC_SCOPE,
  type ReadScope,
  type SkillRevisionEntry,
  type SkillSummary,
} from '@atskills/db';
import { problem } from '../problems.js';
import { dayOf } from './uses.js';

// What the browsing pages and feeds show, read with the viewer like every other page (feeds always with the
// public scope: they are cached by anyone and must never carry a private skill).

/** How many rows each list of the home page shows. */
const HOME_LIST = 10;
/** How many entries a feed carries. */
export const FEED_ENTRIES = 50;
/** How many revisions the skill page lists. */
const HISTORY_ENTRIES = 20;

/** The home page's lists: who holds the most, what is used most this week, what is new. */
export interface HomeOverview {
  owners: OwnerSummary[];
  repositories: ContainerSummary[];
  collections: ContainerSummary[];
  mostUsed: (SkillSummary & { weekUses: number })[];
  added: SkillSummary[];
  updated: SkillSummary[];
}

/** How long the public home lists are reused. */
export const PUBLIC_HOME_CACHE_MS = 30_000;

// The owner and repository lists group every live skill (hundreds of milliseconds at 100k skills), and the
// public view is the same for every anonymous visitor: one computation serves them all for 30 s. A viewer
// with private namespaces always gets a fresh, own view.
const publicHome = new WeakMap<Database, { until: number; overview: Promise<HomeOverview> }>();

function isPublicScope(viewer: ReadScope): boolean {
  return !viewer.isAdmin && viewer.readableNamespaces.length === 0;
}

/** The home page's browse lists for a viewer (one query per list, run together; public view reused 30 s). */
export async function getHomeOverview(
  db: Database,
  viewer: ReadScope,
  now: Date = new Date(),
): Promise<HomeOverview> {
  if (!isPublicScope(viewer)) return readHomeOverview(db, viewer, now);
  const cached = publicHome.get(db);
  if (cached && cached.until > now.getTime()) return cached.overview;
  const overview = readHomeOverview(db, PUBLIC_SCOPE, now);
  publicHome.set(db, { until: now.getTime() + PUBLIC_HOME_CACHE_MS, overview });
  // A failed read is not kept: the next visitor tries again.
  overview.catch(() => {
    if (publicHome.get(db)?.overview === overview) publicHome.delete(db);
  });
  return overview;
}

async function readHomeOverview(db: Database, viewer: ReadScope, now: Date): Promise<HomeOverview> {
  const [owners, repositories, collections, mostUsed, added, updated] = await Promise.all([
    listOwners(db, viewer, HOME_LIST),
    listContainers(db, viewer, { source: 'gh' }, HOME_LIST),
    listContainers(db, viewer, { source: 'hub' }, HOME_LIST),
    listMostUsedSkills(db, viewer, dayOf(now), HOME_LIST),
    listRecentSkills(db, viewer, {}, 'added', HOME_LIST),
    listRecentSkills(db, viewer, {}, 'updated', HOME_LIST),
  ]);
  return { owners, repositories, collections, mostUsed, added, updated };
}

/** A gh owner's or hub namespace's page: its repositories or collections and its latest changes. */
export interface OwnerOverview {
  source: 'gh' | 'hub';
  /** The stored spelling (gh owners are matched in any case). */
  owner: string;
  skills: number;
  /** How many repositories or collections it has (the list below stops at 500). */
  containerCount: number;
  containers: ContainerSummary[];
  updated: SkillSummary[];
}

/** An owner's page for a viewer; 404 when the viewer sees no skill of it (private namespaces included). */
export async function getOwnerOverview(
  db: Database,
  viewer: ReadScope,
  source: 'gh' | 'hub',
  owner: string,
): Promise<OwnerOverview> {
  const found = await findOwner(db, viewer, source, owner);
  if (!found)
    throw problem('not-found', `No ${source === 'gh' ? 'GitHub owner' : 'hub namespace'} ${owner} here`);
  const filter = { source, owner: found.owner };
  const [containers, updated] = await Promise.all([
    // Every repository of an owner fits on one page in practice; the cap only bounds a runaway owner.
    listContainers(db, viewer, filter, 500),
    listRecentSkills(db, viewer, filter, 'updated', HOME_LIST),
  ]);
  return {
    source,
    owner: found.owner,
    skills: found.skills,
    containerCount: found.containers,
    containers,
    updated,
  };
}

/** A feed's entries: the public skills changed last, newest first, optionally of one owner (404 if unknown). */
export async function getFeedSkills(
  db: Database,
  filter: { source: 'gh' | 'hub'; owner: string } | undefined,
): Promise<{ owner?: string; skills: SkillSummary[] }> {
  if (!filter) return { skills: await listRecentSkills(db, PUBLIC_SCOPE, {}, 'updated', FEED_ENTRIES) };
  const found = await findOwner(db, PUBLIC_SCOPE, filter.source, filter.owner);
  if (!found) throw problem('not-found', `No public skills of ${filter.owner} here`);
  const skills = await listRecentSkills(
    db,
    PUBLIC_SCOPE,
    { source: filter.source, owner: found.owner },
    'updated',
    FEED_ENTRIES,
  );
  return { owner: found.owner, skills };
}

/** The revisions of a skill the viewer may see, newest first. */
export async function getSkillHistory(
  db: Database,
  viewer: ReadScope,
  skillId: number,
): Promise<SkillRevisionEntry[]> {
  return listSkillRevisions(db, viewer, skillId, HISTORY_ENTRIES);
}
