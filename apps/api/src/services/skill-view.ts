import { type Database, existingBlobHashes, type ReadScope, usesOfIdentities } from '@atskills/db';
import { formatReference, renderMenu } from '@atskills/protocol';
import type { MenuResponse, SkillView } from '../schemas.js';
import { wireFlag } from './flags.js';
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
  view: MenuResponse;
  resolved: ResolvedMenu;
  /** The menu as text, `- <identity>: <description>` per line. */
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
    return {
      kind: 'menu',
      resolved,
      view: { kind: 'menu', identity: resolved.identity, revision: resolved.revision, items: resolved.items },
      text: renderMenu(resolved.items),
    };
  }
  const [files, uses] = await Promise.all([
    servableFiles(db, resolved),
    usesOfIdentities(db, [resolved.identity], today),
  ]);
  return {
    kind: 'skill',
    resolved,
    view: {
      kind: 'skill',
      identity: resolved.identity,
      reference: formatReference({ identity: resolved.identity }),
      revision: resolved.revision,
      name: resolved.name,
      description: resolved.description,
      frontmatter: resolved.frontmatter,
      body: resolved.body,
      files,
      flags: resolved.flags.map((f) => wireFlag(f, { revision: resolved.revision, withExcerpt: true })),
      warnings: resolved.warnings,
      source: resolved.source,
      repository: resolved.repository,
      path: resolved.path,
      stars: resolved.stars,
      uses: uses.get(resolved.identity) ?? { week: 0, total: 0 },
      descriptionTokens: resolved.descriptionTokens,
      bodyTokens: resolved.bodyTokens,
      lastSeen: resolved.lastSeen,
    },
  };
}
