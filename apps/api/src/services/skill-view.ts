import {
  type Database,
  existingBlobHashes,
  findLiveSkillRevision,
  type ReadScope,
  type SkillUses,
  usesOfIdentities,
} from '@atskills/db';
import { formatReference } from '@atskills/protocol';
import type { HubMenuResponse, SkillView } from '../schemas.js';
import { flagRules, wireFlag } from './flags.js';
import { menuRevisionWithVerdicts, menuText, withMenuVerdicts } from './menu-verdicts.js';
import { pick } from './pick.js';
import type { CachedRevision } from './read-cache.js';
import { type ResolvedMenu, type ResolvedSkill, resolveIdentity } from './resolve.js';

/** A skill as GET /v1/skills and the web page show it. */
export interface SkillViewResult {
  kind: 'skill';
  view: SkillView;
  resolved: ResolvedSkill;
}

/** A menu as GET /v1/skills and the web page show it. */
export interface MenuViewResult {
  kind: 'menu';
  view: HubMenuResponse;
  resolved: ResolvedMenu;
  /** The menu as text, `- <identity>: <description>` per line (flags named, a refused row's text left out). */
  text: string;
}

/**
 * The files of a skill that the hub can actually serve (their content is stored), so the file list and
 * the archive always agree: crawled skills may list files whose bodies were never downloaded.
 */
export async function servableFiles(db: Database, skill: Pick<ResolvedSkill, 'files'>) {
  const candidates = skill.files.filter((f) => !f.skipped);
  const present = await existingBlobHashes(
    db,
    candidates.map((f) => f.sha256),
  );
  return candidates
    .filter((f) => present.has(f.sha256))
    .map(({ path, size, sha256 }) => ({ path, size, sha256 }));
}

/** The fields of a resolved skill that GET /v1/skills shows as they are. */
export const SKILL_VIEW_FIELDS = [
  'identity',
  'revision',
  'name',
  'description',
  'frontmatter',
  'body',
  'warnings',
  'source',
  'repository',
  'path',
  'stars',
  'descriptionTokens',
  'bodyTokens',
  'lastSeen',
] as const satisfies readonly (keyof ResolvedSkill & keyof SkillView)[];

/** The view of GET /v1/skills for a resolved skill: its shown fields, the reference, servable files, wire flags. */
export function toSkillView(
  resolved: ResolvedSkill,
  files: SkillView['files'],
  uses: SkillUses = { week: 0, total: 0 },
): SkillView {
  // A file the crawl did not download is in neither the list nor the archive: a client saving the skill is
  // told it is incomplete, and which files are missing, instead of finding out from a broken script.
  const leftOut = resolved.files.flatMap((f) => (f.skipped ? [{ path: f.path, reason: f.skipped }] : []));
  return {
    kind: 'skill',
    ...pick(resolved, SKILL_VIEW_FIELDS),
    uses,
    reference: formatReference({ identity: resolved.identity }),
    files,
    flags: resolved.flags.map((f) => wireFlag(f, { revision: resolved.revision, withExcerpt: true })),
    ...(leftOut.length > 0
      ? { warnings: [...resolved.warnings, FILES_LEFT_OUT_WARNING], filesLeftOut: leftOut }
      : {}),
  };
}

/** The warning of a skill some of whose files the hub did not download. */
export const FILES_LEFT_OUT_WARNING = 'files-left-out';

/** Resolves an identity for a viewer into the view of GET /v1/skills (throws problems like resolveIdentity). */
export async function getSkillView(
  db: Database,
  viewer: ReadScope,
  identity: string,
  rev?: string,
  today: string = new Date().toISOString().slice(0, 10),
): Promise<SkillViewResult | MenuViewResult> {
  const resolved = await resolveIdentity(db, viewer, identity, rev);
  if (resolved.kind === 'menu') {
    // Each row carries its skill's verdict: a skill judged malicious lists no text of its own (SPEC 2.8).
    const items = await withMenuVerdicts(db, viewer, resolved.items);
    return {
      kind: 'menu',
      resolved,
      view: {
        kind: 'menu',
        identity: resolved.identity,
        revision: menuRevisionWithVerdicts(resolved.revision, items),
        items,
      },
      text: menuText(items),
    };
  }
  const [files, uses] = await Promise.all([
    servableFiles(db, resolved),
    usesOfIdentities(db, [resolved.identity], today),
  ]);
  return { kind: 'skill', resolved, view: toSkillView(resolved, files, uses.get(resolved.identity)) };
}

/** The revision and flag rules of a live skill the viewer may read, by its exact stored identity (one lookup). */
export async function liveSkillRevision(
  db: Database,
  viewer: ReadScope,
  identity: string,
): Promise<CachedRevision | undefined> {
  const row = await findLiveSkillRevision(db, viewer, identity);
  return row && { revision: row.revision, flagRules: flagRules(row.flags) };
}
