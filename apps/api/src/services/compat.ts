import {
  type Database,
  listSkillsAtOrUnder,
  type ReadScope,
  readBlobs,
  type SkillLocation,
} from '@atskills/db';
import {
  formatIdentity,
  refusalLine,
  refusingVerdict,
  SKILL_FILE,
  splitIdentityPrefix,
  trimTrailingSlashes,
} from '@atskills/protocol';
import { stringify } from 'yaml';
import { isHttpProblem, problem } from '../problems.js';
import { readSkillFile } from './archive.js';
import { flagRules } from './flags.js';
import { type LocatedIdentity, locateIdentity } from './locate.js';
import {
  type MenuRow,
  menuRevisionWithVerdicts,
  menuRowOf,
  menuText,
  withMenuVerdicts,
} from './menu-verdicts.js';
import { type Resolution, type ResolvedSkill, resolveIdentity, resolveLocated } from './resolve.js';

/** A text answer of the compatibility routes with the revision it was made from. */
export interface CompatText {
  body: string | Buffer;
  contentType: string;
  revision: string;
  pinned: boolean;
  /** Private content: pinned answers are cached privately only. */
  private: boolean;
  /** The skill whose SKILL.md or file this is (a use of it). */
  skillIdentity: string;
  /** The skill's safety flags that still hold, for X-Skill-Flags (as GET /v1/skills sends them). */
  flags: string[];
}

/** The SKILL.md of a skill as stored; rebuilt from frontmatter and body if its bytes were not kept. */
export async function rawSkillMarkdown(db: Database, skill: ResolvedSkill): Promise<string> {
  const file = skill.files.find((f) => f.path === SKILL_FILE && !f.skipped);
  if (file) {
    const bytes = (await readBlobs(db, [file.sha256])).get(file.sha256);
    if (bytes) return bytes.toString('utf8');
  }
  return `---\n${stringify(skill.frontmatter).trimEnd()}\n---\n${skill.body}`;
}

/** One row of the compatibility menu (SPEC 2.2): `path` is the identity relative to the hub root. */
export interface CompatMenuItem {
  id: string;
  path: string;
  name: string;
  description: string;
  /** The skill's safety flags that still hold; absent when none. */
  flags?: string[];
  /** The hub judged the skill malicious: no name, a refusal line for its description. */
  refused?: true;
}

/** GET /api/skills?prefix=: the menu as JSON (default) or as text lines, with the revision it was made from. */
export interface CompatMenu {
  skills: CompatMenuItem[];
  text: string;
  revision: string;
  pinned: boolean;
  /** Private content: pinned answers are cached privately only. */
  private: boolean;
}

/** The revision answer of GET /api/skills/<path>/revision. */
export interface CompatRevision {
  revision: string;
  pinned: boolean;
  private: boolean;
}

async function menuOf(db: Database, viewer: ReadScope, resolved: Resolution): Promise<CompatMenu> {
  // Each row carries its skill's verdict, as GET /v1/skills menus do: a skill judged malicious lists no text
  // of its own (SPEC 2.8).
  const items: MenuRow[] =
    resolved.kind === 'skill' ? [skillRow(resolved)] : await withMenuVerdicts(db, viewer, resolved.items);
  return {
    skills: items.map((i) => ({
      id: i.identity,
      path: hubRelativePath(i.identity),
      name: i.name,
      description: i.description,
      ...(i.flags ? { flags: i.flags } : {}),
      ...(i.refused ? { refused: i.refused } : {}),
    })),
    text: items.length ? `${menuText(items)}\n` : '',
    // A one-skill menu too: its row loses its text when a verdict lands, so its validator must change.
    revision: menuRevisionWithVerdicts(resolved.revision, items),
    pinned: resolved.pinned,
    private: resolved.private,
  };
}

/** The menu row of one resolved skill (its own flags, which a pinned revision keeps). */
function skillRow(skill: ResolvedSkill): MenuRow {
  return menuRowOf(skill, flagRules(skill.flags));
}

/**
 * What the compatibility routes serve of a skill: its active flags, or, when the hub judged it malicious,
 * a refusal instead of any of its text (its SKILL.md, a bundled file), as every agent path refuses it.
 * The reference client shows the problem's detail; it never learns of X-Skill-Flags.
 */
function servedFlags(skill: ResolvedSkill): string[] {
  const flags = flagRules(skill.flags);
  const verdict = refusingVerdict(flags);
  if (verdict)
    throw problem('skill-refused', refusalLine(skill.identity, verdict), {
      identity: skill.identity,
      revision: skill.revision,
      verdict,
      flags,
    });
  return flags;
}

/** The skill or folder at an identity, or undefined when there is none the viewer may see. */
async function resolveOrMissing(
  db: Database,
  viewer: ReadScope,
  located: LocatedIdentity,
  rev?: string,
): Promise<Resolution | undefined> {
  try {
    return await resolveLocated(db, viewer, located, rev);
  } catch (err) {
    if (isHttpProblem(err) && err.code === 'not-found') return undefined;
    throw err;
  }
}

/** `path` of a compat menu row: a hub identity without `hub:` (relative to the hub root); others whole. */
function hubRelativePath(identity: string): string {
  const { source, rest } = splitIdentityPrefix(identity);
  return source === 'hub' ? rest : identity;
}

/** An identity from a compat path: `hub:` unless the path carries its own `gh:`/`hub:` prefix. */
function compatIdentity(path: string): string {
  return splitIdentityPrefix(path, { encodedColon: true }).source === 'local'
    ? formatIdentity('hub', path)
    : path;
}

/**
 * The sub-path segments of a compat path in the case the client wrote them. A hub identity folds case, but
 * only the identity does: a bundled file's name (`REFERENCE.md`, `Scripts/Run.py`) keeps its case. A gh:
 * identity keeps case anyway, so its parsed path is already as written.
 */
function segmentsAsWritten(path: string, location: SkillLocation): string[] {
  const folded = location.path.split('/');
  if (location.source !== 'hub') return folded;
  // The path parsed as an identity already, so it decodes; namespace and collection come first.
  const written = decodeURIComponent(splitIdentityPrefix(path, { encodedColon: true }).rest)
    .split('/')
    .slice(2);
  const same = written.length === folded.length && written.every((s, i) => s.toLowerCase() === folded[i]);
  return same ? written : folded;
}

/**
 * GET /api/skills/<path>: `<namespace>/<name>` is the raw SKILL.md of hub:<namespace>/<name>; a longer
 * path is a skill's SKILL.md, a folder's menu as text, or one file bundled with the deepest skill that is
 * a prefix of it (`<skill path>/<file>`).
 */
export async function compatGet(
  db: Database,
  viewer: ReadScope,
  rawPath: string,
  rev?: string,
): Promise<CompatText> {
  const located = locateIdentity(compatIdentity(trimTrailingSlashes(rawPath)));
  const resolved = await resolveOrMissing(db, viewer, located, rev);
  if (resolved?.kind === 'skill') {
    const flags = servedFlags(resolved);
    return {
      flags,
      body: await rawSkillMarkdown(db, resolved),
      contentType: 'text/markdown; charset=utf-8',
      revision: resolved.revision,
      pinned: resolved.pinned,
      private: resolved.private,
      skillIdentity: resolved.identity,
    };
  }
  // The reference client caches a 200 as a SKILL.md: a folder is a 404, after which it asks ?prefix=.
  if (resolved?.kind === 'menu')
    throw problem(
      'not-found',
      `${located.identity.identity} is a folder of skills, not a skill; its menu is GET /api/skills?prefix=${trimTrailingSlashes(rawPath)}/`,
    );
  // Not a skill or folder: the deepest skill above the path owns it as a bundled file.
  const { location } = located;
  const segments = location.path.split('/');
  const written = segmentsAsWritten(trimTrailingSlashes(rawPath), location);
  const rows = await listSkillsAtOrUnder(db, viewer, { ...location, path: '' });
  for (let n = segments.length - 1; n >= 0; n--) {
    const skillPath = segments.slice(0, n).join('/');
    const owner = rows.find((r) => r.path === skillPath && r.goneAt === null);
    if (!owner) continue;
    const resolved = await resolveIdentity(db, viewer, owner.identity, rev);
    if (resolved.kind !== 'skill') break;
    const flags = servedFlags(resolved);
    const file = await readSkillFile(db, resolved, written.slice(n).join('/'));
    return {
      flags,
      body: file.content,
      contentType: file.path.endsWith('.md') ? 'text/markdown; charset=utf-8' : 'text/plain; charset=utf-8',
      revision: resolved.revision,
      pinned: resolved.pinned,
      private: resolved.private,
      skillIdentity: resolved.identity,
    };
  }
  throw problem('not-found', `Nothing at ${located.identity.identity}`);
}

/** GET /api/skills?prefix=<path>/: the menu of a folder (a skill's prefix gives that one skill). */
export async function compatMenu(
  db: Database,
  viewer: ReadScope,
  prefix: string,
  rev?: string,
): Promise<CompatMenu> {
  return menuOf(
    db,
    viewer,
    await resolveIdentity(db, viewer, compatIdentity(trimTrailingSlashes(prefix)), rev),
  );
}

/**
 * GET /api/skills/<path>/revision: the revision the ETag of <path> carries, when <path> is a skill or a
 * folder; undefined when it is neither (then `revision` may be a bundled file or a skill of that name).
 */
export async function compatRevision(
  db: Database,
  viewer: ReadScope,
  rawPath: string,
  rev?: string,
): Promise<CompatRevision | undefined> {
  const match = /^(.+)\/revision\/*$/.exec(rawPath);
  if (!match?.[1]) return undefined;
  // A skill or folder literally named `revision` wins: it is what the path names.
  if (await resolveOrMissing(db, viewer, locateIdentity(compatIdentity(trimTrailingSlashes(rawPath))), rev))
    return undefined;
  const parent = await resolveOrMissing(db, viewer, locateIdentity(compatIdentity(match[1])), rev);
  if (!parent) return undefined;
  // The revision the ETag of the path carries: a menu's covers its rows' verdicts.
  const revision =
    parent.kind === 'menu'
      ? menuRevisionWithVerdicts(parent.revision, await withMenuVerdicts(db, viewer, parent.items))
      : parent.revision;
  return { revision, pinned: parent.pinned, private: parent.private };
}
