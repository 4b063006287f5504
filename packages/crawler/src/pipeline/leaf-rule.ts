import type { ReportEntry } from '@atskills/db';
import {
  findSkillFolders,
  formatIdentity,
  MENU_CAP,
  parseIdentity,
  type TreeEntry,
} from '@atskills/protocol';

/** The identity every skill of a job hangs under: `gh:owner/repo` or `hub:team/collection`. */
export interface IdentityRoot {
  source: 'gh' | 'hub';
  /** The identity's path segments above the skills ([owner, repo] or [team, collection]). */
  segments: string[];
}

/** One skill folder at the fetched head. */
export interface SkillFolder {
  /** Its path in the listing ('' for a root skill), as git spells it. */
  path: string;
  /** Its path as the index stores it: hub names are case-insensitive, so a hub skill's is lower-case. */
  storedPath: string;
  identity: string;
  /** The folder's git tree sha: the revision of the skill. */
  revision: string;
}

/** The leaf rule's answer: every skill folder, and those whose revision is not the stored one. */
export interface LeafRuleResult {
  all: SkillFolder[];
  changed: SkillFolder[];
}

/**
 * The leaf-rule phase: every skill folder of the listing with its identity and revision (its git tree
 * sha), and those whose revision differs from the stored one (all of them when `force`). A folder whose
 * path cannot be an identity goes into `errors` instead.
 */
export function leafRule(
  entries: TreeEntry[],
  folderTree: string,
  root: IdentityRoot,
  stored: ReadonlyMap<string, { revision: string }>,
  force: boolean,
  errors: ReportEntry[],
): LeafRuleResult {
  const treeShaOf = new Map(entries.filter((e) => e.type === 'dir').map((e) => [e.path, e.sha ?? '']));
  const all: SkillFolder[] = [];
  for (const path of findSkillFolders(entries)) {
    // The protocol lower-cases hub paths; the stored path follows the identity.
    const storedPath = root.source === 'hub' ? path.toLowerCase() : path;
    const identity = formatIdentity(
      root.source,
      [...root.segments, storedPath].filter((p) => p !== '').join('/'),
    );
    try {
      if (parseIdentity(identity).identity !== identity) throw new Error('it does not normalize to itself');
    } catch (error) {
      errors.push({
        path,
        code: 'bad-identity',
        message: `The folder cannot be an identity (${identity}): ${(error as Error).message}`,
      });
      continue;
    }
    all.push({
      path,
      storedPath,
      identity,
      revision: path === '' ? folderTree : (treeShaOf.get(path) ?? ''),
    });
  }
  const changed = all.filter((f) => force || stored.get(f.storedPath)?.revision !== f.revision);
  return { all, changed };
}

/**
 * Folders holding more than K skills: each skill is listed, but the folder's menu answers 422 over-cap, so
 * the author learns why `@skills:gh:owner/repo/folder` does not work.
 */
export function overCapProblems(skillFolders: string[]): ReportEntry[] {
  const below = new Map<string, number>();
  for (const folder of skillFolders) {
    const parts = folder === '' ? [] : folder.split('/');
    for (let depth = 0; depth < parts.length; depth++) {
      const ancestor = parts.slice(0, depth).join('/');
      below.set(ancestor, (below.get(ancestor) ?? 0) + 1);
    }
  }
  return [...below]
    .filter(([, count]) => count > MENU_CAP)
    .map(([folder, count]) => ({
      path: folder,
      code: 'over-cap',
      message: `${count} skills under ${folder === '' ? 'the repository root' : folder}: more than the ${MENU_CAP} a menu lists, so referencing this folder answers over-cap; reference a sub-folder or a skill.`,
    }));
}
