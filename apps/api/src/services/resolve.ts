import {
  contentVerdictsFor,
  type Database,
  findSafetyVerdict,
  findSkillAt,
  findSkillRevision,
  listSkillsAtOrUnder,
  type ReadScope,
  repositoryWentPrivate,
  type SkillFile,
  type SkillListing,
  type SkillRow,
  suppressionsFor,
  withContentVerdict,
} from '@atskills/db';
import { lookup, MENU_CAP, type SafetyFinding, SKILL_FILE, type TreeEntry } from '@atskills/protocol';
import { skillContentHash } from '@atskills/protocol/content';
import { problem } from '../problems.js';
import { identityOf, type LocatedIdentity, locateIdentity } from './locate.js';
import { menuRevision } from './menu-revision.js';
import { menuRevisionWithVerdicts, withMenuVerdicts } from './menu-verdicts.js';
import { pick } from './pick.js';

/** A skill at a revision: everything GET /v1/skills answers, plus what the archive and file routes need. */
export interface ResolvedSkill {
  kind: 'skill';
  identity: string;
  revision: string;
  /** True when a `?rev=` asked for this exact revision (immutable caching). */
  pinned: boolean;
  skillId: number;
  name: string;
  description: string;
  frontmatter: Record<string, unknown>;
  body: string;
  files: SkillFile[];
  flags: SafetyFinding[];
  warnings: string[];
  source: 'gh' | 'hub';
  /** gh: owner/repo; hub: namespace/collection. */
  repository: string;
  path: string;
  stars: number;
  descriptionTokens: number;
  bodyTokens: number;
  lastSeen: string;
  commit: string | null;
  /** Whether this answer is private (a private skill, or a revision published while private). */
  private: boolean;
}

/** One row of a menu. */
export interface ResolvedMenuItem {
  identity: string;
  name: string;
  description: string;
}

/** A folder without SKILL.md: its skills (at most K). */
export interface ResolvedMenu {
  kind: 'menu';
  identity: string;
  revision: string;
  pinned: boolean;
  items: ResolvedMenuItem[];
  /** Whether any skill of the menu is private. */
  private: boolean;
}

export type Resolution = ResolvedSkill | ResolvedMenu;

/** The columns of a skill row that a resolved skill carries as they are. */
const ROW_FIELDS = [
  'identity',
  'revision',
  'name',
  'description',
  'frontmatter',
  'body',
  'files',
  'flags',
  'path',
  'stars',
  'descriptionTokens',
  'bodyTokens',
  'commit',
] as const satisfies readonly (keyof SkillRow & keyof ResolvedSkill)[];

/** What a stored revision (`?rev=`) replaces in the current row's skill; the rest (stars, flags...) is current. */
const REVISION_FIELDS = [
  'revision',
  'name',
  'description',
  'frontmatter',
  'body',
  'files',
  'commit',
] as const satisfies readonly (keyof ResolvedSkill)[];

function dateOnly(d: Date): string {
  return d.toISOString().slice(0, 10);
}

function skillFromRow(row: SkillRow, pinned: boolean): ResolvedSkill {
  const warnings = [...row.warnings];
  if (row.parseError) warnings.push(`parse-error: ${row.parseError.code}`);
  return {
    kind: 'skill',
    ...pick(row, ROW_FIELDS),
    pinned,
    skillId: row.id,
    warnings,
    source: row.source as 'gh' | 'hub',
    repository: `${row.owner}/${row.container}`,
    lastSeen: row.lastSeenAt.toISOString(),
    private: row.visibility !== 'public',
  };
}

/**
 * The scanner's findings for an older revision (its cached verdict), with accepted disputes applied and an
 * accepted "malicious" verdict on its content added.
 */
async function flagsOfRevision(
  db: Database,
  old: { revision: string; files: SkillFile[] },
): Promise<SafetyFinding[]> {
  const hash = skillContentHash(old.files.filter((f) => !f.skipped));
  const [flags = [], suppressed, verdict] = await Promise.all([
    findSafetyVerdict(db, [old.revision, hash]),
    suppressionsFor(db, [hash]).then((m) => m.get(hash)),
    contentVerdictsFor(db, [hash]).then((m) => m.get(hash)),
  ]);
  return withContentVerdict(
    flags.map((f) => {
      const by = suppressed?.get(f.rule);
      return by === undefined || by === null ? f : { ...f, suppressedBy: by };
    }),
    verdict,
  );
}

function readsPrivately(viewer: ReadScope, owner: string): boolean {
  return viewer.isAdmin || viewer.readableNamespaces.includes(owner.toLowerCase());
}

/**
 * Resolves an identity (text from a URL or body) for a viewer, optionally pinned to a revision:
 * a skill, or a menu of the skills beneath a folder (leaf rule over the rows, K = 128).
 * Throws problems: 400 bad-identity, 404 not-found (also for private rows the viewer may not read),
 * 410 gone (lastRevision, lastSeen), 422 over-cap (count, subcollections).
 */
export async function resolveIdentity(
  db: Database,
  viewer: ReadScope,
  text: string,
  rev?: string,
): Promise<Resolution> {
  return resolveLocated(db, viewer, locateIdentity(text), rev);
}

/** resolveIdentity for an identity already parsed. */
export async function resolveLocated(
  db: Database,
  viewer: ReadScope,
  located: LocatedIdentity,
  rev?: string,
): Promise<Resolution> {
  const { location } = located;
  const canonical = located.identity.identity;
  const rows = await listSkillsAtOrUnder(db, viewer, location);
  const exact = rows.find((r) => r.path === location.path);
  const current = rows.filter((r) => r.goneAt === null);
  // A folder whose SKILL.md is gone but which holds current skills (a skill replaced by sub-skills) is a
  // menu again: what is there now wins over what was there; the gone skill stays reachable by `?rev=`.
  const menu = exact === undefined || exact.goneAt !== null ? menuOf(current, located) : undefined;
  // A menu is answered with a revision that covers its rows' verdicts (menu-verdicts.ts), and that is the
  // revision a client pins; a menu is not stored, so a pinned one is the current one, revalidated like it
  // (its verdicts can still change): never an immutable answer.
  if (menu && (rev === undefined || rev === menu.revision || (await isMenuRevision(db, viewer, menu, rev))))
    return { ...menu, pinned: false };
  if (exact) {
    const row = await findSkillAt(db, viewer, location);
    if (!row) throw problem('not-found', `Nothing at ${canonical}`);
    // A repository GitHub now reports as private: none of its revisions is served, pinned or not.
    if (rev !== undefined && row.goneAt && row.repositoryId !== null) {
      if (await repositoryWentPrivate(db, row.repositoryId)) {
        throw problem('not-found', `${row.identity} has no revision ${rev}`);
      }
    }
    if (rev !== undefined && rev !== row.revision) {
      const old = await findSkillRevision(db, row.id, rev);
      const hidden = old?.publishedVisibility === 'private' && !readsPrivately(viewer, row.owner);
      // A revision published while its collection was private stays private after it goes public.
      if (!old || hidden) throw problem('not-found', `${row.identity} has no revision ${rev}`);
      return {
        ...skillFromRow(row, true),
        ...pick(old, REVISION_FIELDS),
        // Flags are keyed by revision: the pinned revision's own verdict, not the current one's.
        flags: await flagsOfRevision(db, old),
        private: row.visibility !== 'public' || old.publishedVisibility === 'private',
      };
    }
    if (row.goneAt && rev === undefined) {
      throw problem('gone', `${row.identity} is gone upstream`, {
        identity: row.identity,
        lastRevision: row.revision,
        lastSeen: dateOnly(row.lastSeenAt),
      });
    }
    return skillFromRow(row, rev !== undefined);
  }
  // Old menus are not stored: a menu is only fetchable at its current revision.
  if (menu) throw problem('not-found', `${canonical} has no revision ${rev}`);
  // Only gone skills here (a deleted or unlinked collection, a folder emptied upstream): the folder is gone
  // too, to those who may see its rows, like each skill in it; no rows at all is an unknown identity.
  if (rows.length > 0 && rev === undefined) {
    const last = menuOf(rows, located, Number.MAX_SAFE_INTEGER);
    // A listing carries no last-seen time; a skill was last seen when it went gone.
    const lastSeen = Math.max(...rows.map((r) => r.goneAt?.getTime() ?? 0));
    throw problem('gone', `${canonical} is gone upstream`, {
      identity: canonical,
      lastRevision: last?.revision ?? menuRevision(rows),
      lastSeen: dateOnly(new Date(lastSeen)),
    });
  }
  throw problem('not-found', `Nothing at ${canonical}`);
}

/** Whether `rev` is the revision `menu` is answered with once its rows' verdicts are applied. */
async function isMenuRevision(
  db: Database,
  viewer: ReadScope,
  menu: Omit<ResolvedMenu, 'pinned'>,
  rev: string,
): Promise<boolean> {
  return menuRevisionWithVerdicts(menu.revision, await withMenuVerdicts(db, viewer, menu.items)) === rev;
}

/**
 * The menu of the folder at `located` over `rows` (leaf rule, at most `cap` skills); undefined when the
 * rows hold nothing there. Throws 422 over-cap.
 */
function menuOf(
  rows: SkillListing[],
  located: LocatedIdentity,
  cap = MENU_CAP,
): Omit<ResolvedMenu, 'pinned'> | undefined {
  const { location } = located;
  const canonical = located.identity.identity;
  // No rows: an unknown repository or collection (the root of any listing is a folder to `lookup`).
  if (rows.length === 0) return undefined;
  const entries: TreeEntry[] = rows.map((r) => ({
    path: r.path === '' ? SKILL_FILE : `${r.path}/${SKILL_FILE}`,
    type: 'file',
  }));
  const found = lookup(entries, location.path, cap);
  if (found.kind === 'not-found' || found.kind === 'skill') return undefined;
  if (found.kind === 'refused') {
    throw problem(
      'over-cap',
      `${canonical} holds ${found.count} skills, more than the ${MENU_CAP} a menu may list; reference a sub-collection instead`,
      {
        identity: canonical,
        count: found.count,
        cap: MENU_CAP,
        subcollections: found.subcollections.map((s) => ({
          path: s.path,
          identity: identityOf(location, s.path),
          skills: s.skills,
        })),
      },
    );
  }
  const byPath = new Map(rows.map((r) => [r.path, r]));
  const members = found.skills.map((p) => byPath.get(p)).filter((r) => r !== undefined);
  return {
    kind: 'menu',
    identity: canonical,
    revision: menuRevision(members),
    items: members.map((r) => pick(r, ['identity', 'name', 'description'])),
    private: members.some((r) => r.visibility !== 'public'),
  };
}
