/** One entry of a tree listing (a folder walk, `git ls-tree` output, or database rows). */
export interface TreeEntry {
  path: string;
  type: 'file' | 'dir' | 'symlink' | 'submodule' | 'other';
  size?: number;
  sha?: string;
  mode?: string;
}

export const SKILL_FILE = 'SKILL.md';
/** K: the most skills a menu may list. */
export const MENU_CAP = 128;
/** How many sub-collections a refusal offers at most. */
export const MAX_SUBCOLLECTIONS = 6;

/** What a path inside a listing resolves to. */
export type Lookup =
  | { kind: 'skill'; path: string }
  | { kind: 'menu'; path: string; skills: string[] }
  | { kind: 'refused'; path: string; count: number; subcollections: { path: string; skills: number }[] }
  | { kind: 'not-found'; path: string };

/** All skill folders at or under `at` by the leaf rule, sorted by path. */
export function findSkillFolders(_entries: Iterable<TreeEntry>, _at = ''): string[] {
  return [];
}

/** Resolves `at` to a skill, a menu, a refusal over `cap`, or not-found. */
export function lookup(_entries: Iterable<TreeEntry>, at: string, _cap = MENU_CAP): Lookup {
  return { kind: 'not-found', path: at };
}

/** The largest sub-collections under `at` that hold at most `cap` skills (at most `max`, largest first). */
export function subcollectionsThatFit(
  _skillFolders: string[],
  _at: string,
  _cap = MENU_CAP,
  _max = MAX_SUBCOLLECTIONS,
): { path: string; skills: number }[] {
  return [];
}

/** The regular files that belong to the skill at `skillPath`. */
export function skillFiles(_entries: Iterable<TreeEntry>, _skillPath: string): TreeEntry[] {
  return [];
}

/** Folders holding a wrong-case `skill.md` but no `SKILL.md`. */
export function caseWarnings(_entries: Iterable<TreeEntry>): string[] {
  return [];
}

/** Parses `git ls-tree -r -z [--long]` output. */
export function parseLsTree(_output: string): TreeEntry[] {
  return [];
}
