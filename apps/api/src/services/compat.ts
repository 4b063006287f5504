import { type Database, listSkillsAtOrUnder, type ReadScope, readBlobs } from '@atskills/db';
import { formatIdentity, renderMenu, SKILL_FILE, splitIdentityPrefix } from '@atskills/protocol';
import { stringify } from 'yaml';
import { isHttpProblem, problem } from '../problems.js';
import { readSkillFile } from './archive.js';
import { locateIdentity } from './locate.js';
import { type Resolution, type ResolvedSkill, resolveIdentity, resolveLocated } from './resolve.js';

/** A text answer of the compatibility routes with the revision it was made from. */
export interface CompatText {
  body: string | Buffer;
  contentType: string;
  revision: string;
  pinned: boolean;
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

function menuText(resolved: Resolution): CompatText {
  if (resolved.kind === 'skill') {
    return {
      body: `${renderMenu([{ identity: resolved.identity, description: resolved.description }])}\n`,
      contentType: 'text/plain; charset=utf-8',
      revision: resolved.revision,
      pinned: resolved.pinned,
    };
  }
  return {
    body: resolved.items.length ? `${renderMenu(resolved.items)}\n` : '',
    contentType: 'text/plain; charset=utf-8',
    revision: resolved.revision,
    pinned: resolved.pinned,
  };
}

/** An identity from a compat path: `hub:` unless the path carries its own `gh:`/`hub:` prefix. */
function compatIdentity(path: string): string {
  return splitIdentityPrefix(path, { encodedColon: true }).source === 'local'
    ? formatIdentity('hub', path)
    : path;
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
  const located = locateIdentity(compatIdentity(rawPath.replace(/\/+$/, '')));
  try {
    const resolved = await resolveLocated(db, viewer, located, rev);
    if (resolved.kind === 'menu') return menuText(resolved);
    return {
      body: await rawSkillMarkdown(db, resolved),
      contentType: 'text/markdown; charset=utf-8',
      revision: resolved.revision,
      pinned: resolved.pinned,
    };
  } catch (err) {
    if (!isHttpProblem(err) || err.code !== 'not-found') throw err;
  }
  // Not a skill or folder: the deepest skill above the path owns it as a bundled file.
  const { location } = located;
  const segments = location.path.split('/');
  const rows = await listSkillsAtOrUnder(db, viewer, { ...location, path: '' });
  for (let n = segments.length - 1; n >= 0; n--) {
    const skillPath = segments.slice(0, n).join('/');
    const owner = rows.find((r) => r.path === skillPath && r.goneAt === null);
    if (!owner) continue;
    const resolved = await resolveIdentity(db, viewer, owner.identity, rev);
    if (resolved.kind !== 'skill') break;
    const file = await readSkillFile(db, resolved, segments.slice(n).join('/'));
    return {
      body: file.content,
      contentType: file.path.endsWith('.md') ? 'text/markdown; charset=utf-8' : 'text/plain; charset=utf-8',
      revision: resolved.revision,
      pinned: resolved.pinned,
    };
  }
  throw problem('not-found', `Nothing at ${located.identity.identity}`);
}

/** GET /api/skills?prefix=<path>/: the menu of a folder as text. */
export async function compatMenu(
  db: Database,
  viewer: ReadScope,
  prefix: string,
  rev?: string,
): Promise<CompatText> {
  const resolved = await resolveIdentity(db, viewer, compatIdentity(prefix.replace(/\/+$/, '')), rev);
  return menuText(resolved);
}
