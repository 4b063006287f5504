import type { ReportEntry } from '@atskills/db';
import { caseWarnings, SKILL_FILE, type TreeEntry } from '@atskills/protocol';
import type { RemoteSnapshot } from '../git/remote-snapshot.js';

/** The head as fetched, and the listing of the folder the skills live in. */
export interface FolderTree {
  commit: string;
  branch: string | null;
  /** The git tree sha of the folder (the root tree for the whole repository). */
  folderTree: string;
  /** Every entry under the folder, trees included, with paths relative to it. */
  entries: TreeEntry[];
}

/** What the trees phase found: the folder's tree, a repository without commits, or a folder that is not there. */
export type TreesResult = FolderTree | { commit: null } | { commit: string; missingFolder: true };

/**
 * The trees phase: the commit and every tree of `branch` (null: the remote's HEAD) without blobs, and the
 * listing under `folder` ('' for the whole repository), re-rooted there.
 */
export async function fetchTrees(
  snapshot: RemoteSnapshot,
  branch: string | null,
  folder: string,
): Promise<TreesResult> {
  const fetched = await snapshot.fetchTrees(branch);
  if (fetched.commit === null) return { commit: null };
  const all = await snapshot.listTree();
  if (folder === '') {
    return { commit: fetched.commit, branch: fetched.branch, folderTree: fetched.rootTree, entries: all };
  }
  const folderTree = all.find((e) => e.path === folder && e.type === 'dir')?.sha;
  if (!folderTree) return { commit: fetched.commit, missingFolder: true };
  const prefix = `${folder}/`;
  const entries = all
    .filter((e) => e.path.startsWith(prefix))
    .map((e) => ({ ...e, path: e.path.slice(prefix.length) }));
  return { commit: fetched.commit, branch: fetched.branch, folderTree, entries };
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/**
 * Problems of the tree worth reporting: SKILL.md that is not a regular file or sits inside a `.git` folder
 * (the leaf rule never looks there), wrong-case skill.md.
 */
export function treeWarnings(entries: TreeEntry[]): ReportEntry[] {
  const out: ReportEntry[] = [];
  for (const entry of entries) {
    if (basename(entry.path) !== SKILL_FILE) continue;
    if (entry.path.split('/').includes('.git')) {
      out.push({
        path: entry.path,
        code: 'skill-file-in-git-folder',
        message: 'SKILL.md is inside a .git folder, which is never read for skills.',
      });
    } else if (entry.type === 'symlink') {
      out.push({
        path: entry.path,
        code: 'skill-file-symlink',
        message: 'SKILL.md is a symlink; symlinks are never followed.',
      });
    } else if (entry.type === 'submodule') {
      out.push({
        path: entry.path,
        code: 'skill-file-submodule',
        message: 'SKILL.md is a submodule; submodules are never followed.',
      });
    }
  }
  for (const folder of caseWarnings(entries)) {
    out.push({
      path: folder,
      code: 'wrong-case-skill-file',
      message: 'The folder holds a skill.md in the wrong letter case; only SKILL.md makes a skill.',
    });
  }
  return out;
}
