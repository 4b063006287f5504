// The leaf rule (SPEC 1.2) over an abstract listing, so the same code walks a folder on disk, `git ls-tree`
// output, or database rows.

import { trimEdgeSlashes } from './slashes.js';

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

/** All skill folders at or under `at` by the leaf rule (a skill's nested SKILL.md folders belong to it), sorted. */
export function findSkillFolders(entries: Iterable<TreeEntry>, at = ''): string[] {
  const base = trimSlashes(at);
  const list = [...entries];
  const unfollowed = linkPaths(list);
  const holders = new Set<string>();
  for (const entry of list) {
    if (entry.type !== 'file') continue;
    const path = trimSlashes(entry.path);
    if (inGitDir(path) || basename(path) !== SKILL_FILE || behindLink(path, unfollowed)) continue;
    const folder = dirname(path);
    if (isAtOrUnder(folder, base)) holders.add(folder);
  }
  // A holder is a skill unless a folder between it and `at` (inclusive) is one: the walk stops at a skill.
  const skills = [...holders].filter((folder) => !ancestorsDownTo(folder, base).some((a) => holders.has(a)));
  return skills.sort(comparePaths);
}

/**
 * Resolves `at` to a skill, a menu, a refusal over `cap`, or not-found. A path inside a skill (a folder
 * beneath a SKILL.md holder, a nested SKILL.md included) is not-found: the walk never descends into a skill,
 * so its sub-folders are files of that skill, not skills or menus of their own.
 */
export function lookup(entries: Iterable<TreeEntry>, at: string, cap = MENU_CAP): Lookup {
  const path = trimSlashes(at);
  const list = [...entries];
  if (inGitDir(path) || !isFolder(list, path) || insideSkill(list, path)) return { kind: 'not-found', path };
  const skillFile = path === '' ? SKILL_FILE : `${path}/${SKILL_FILE}`;
  if (list.some((e) => e.type === 'file' && trimSlashes(e.path) === skillFile))
    return { kind: 'skill', path };
  const skills = findSkillFolders(list, path);
  if (skills.length > cap) {
    return {
      kind: 'refused',
      path,
      count: skills.length,
      subcollections: subcollectionsThatFit(skills, path, cap),
    };
  }
  return { kind: 'menu', path, skills };
}

/**
 * The largest sub-collections under `at` that a user can reference instead of an over-cap path: folders
 * holding at most `cap` skills whose parent (up to `at`) holds more. Largest first, ties by path, at most `max`.
 */
export function subcollectionsThatFit(
  skillFolders: string[],
  at: string,
  cap = MENU_CAP,
  max = MAX_SUBCOLLECTIONS,
): { path: string; skills: number }[] {
  const base = trimSlashes(at);
  const counts = new Map<string, number>();
  let total = 0;
  for (const skill of skillFolders) {
    const folder = trimSlashes(skill);
    if (folder === base || !isAtOrUnder(folder, base)) continue;
    total++;
    for (const folderBeneath of [folder, ...ancestorsDownTo(folder, base).filter((a) => a !== base)]) {
      counts.set(folderBeneath, (counts.get(folderBeneath) ?? 0) + 1);
    }
  }
  const countOf = (folder: string) => (folder === base ? total : (counts.get(folder) ?? 0));
  return [...counts]
    .filter(([folder, n]) => n <= cap && countOf(dirname(folder)) > cap)
    .map(([path, skills]) => ({ path, skills }))
    .sort((a, b) => b.skills - a.skills || comparePaths(a.path, b.path))
    .slice(0, max);
}

/** The regular files that belong to the skill at `skillPath` (nested skill folders included, no `.git`). */
export function skillFiles(entries: Iterable<TreeEntry>, skillPath: string): TreeEntry[] {
  return skillFilesOf(entries, [skillPath]).get(skillPath)!;
}

/**
 * `skillFiles` of every skill of `skillPaths`, keyed by the path as given, in one pass over the entries:
 * each file goes to the skills among the folders above it. Asked a skill at a time, a collection of 1,000
 * skills 20 folders deep with 10,000 files read every entry once a skill (13 s of a publish request).
 */
export function skillFilesOf(
  entries: Iterable<TreeEntry>,
  skillPaths: readonly string[],
): Map<string, TreeEntry[]> {
  const byBase = new Map<string, TreeEntry[]>();
  for (const skillPath of skillPaths) byBase.set(trimSlashes(skillPath), []);
  const list = [...entries];
  const unfollowed = linkPaths(list);
  for (const entry of list) {
    if (entry.type !== 'file') continue;
    const path = trimSlashes(entry.path);
    if (inGitDir(path) || behindLink(path, unfollowed)) continue;
    byBase.get('')?.push(entry);
    for (let slash = path.lastIndexOf('/'); slash > 0; slash = path.lastIndexOf('/', slash - 1)) {
      byBase.get(path.slice(0, slash))?.push(entry);
    }
  }
  for (const files of byBase.values()) files.sort((a, b) => comparePaths(a.path, b.path));
  return new Map(skillPaths.map((skillPath) => [skillPath, byBase.get(trimSlashes(skillPath))!]));
}

/** Folders holding a wrong-case `skill.md` but no `SKILL.md` (worth a crawl warning). */
export function caseWarnings(entries: Iterable<TreeEntry>): string[] {
  const exact = new Set<string>();
  const wrongCase = new Set<string>();
  for (const entry of entries) {
    if (entry.type !== 'file') continue;
    const path = trimSlashes(entry.path);
    if (inGitDir(path)) continue;
    const name = basename(path);
    if (name === SKILL_FILE) exact.add(dirname(path));
    else if (name.toLowerCase() === SKILL_FILE.toLowerCase()) wrongCase.add(dirname(path));
  }
  return [...wrongCase].filter((folder) => !exact.has(folder)).sort(comparePaths);
}

/** Parses `git ls-tree -r -z [--long]` output: `<mode> <type> <sha>[ <size>]\t<path>\0` records. */
export function parseLsTree(output: string): TreeEntry[] {
  const entries: TreeEntry[] = [];
  for (const record of output.split('\0')) {
    if (record === '' || record === '\n') continue;
    const tab = record.indexOf('\t');
    if (tab < 0) continue;
    const [mode = '', kind = '', sha = '', size] = record.slice(0, tab).trim().split(/\s+/);
    const path = record.slice(tab + 1);
    const entry: TreeEntry = { path, type: entryType(kind, mode), sha, mode };
    if (size !== undefined && /^\d+$/.test(size)) entry.size = Number(size);
    entries.push(entry);
  }
  return entries;
}

function entryType(kind: string, mode: string): TreeEntry['type'] {
  if (kind === 'blob') return mode === '120000' ? 'symlink' : 'file';
  if (kind === 'tree') return 'dir';
  if (kind === 'commit') return 'submodule';
  return 'other';
}

/** Whether `path` is an existing folder of the listing ('' is the root and always exists). */
function isFolder(entries: TreeEntry[], path: string): boolean {
  if (path === '') return true;
  return entries.some((e) => {
    const p = trimSlashes(e.path);
    return (e.type === 'dir' && p === path) || p.startsWith(`${path}/`);
  });
}

/** Whether a folder above `path` (up to the root) holds SKILL.md, making `path` a part of that skill. */
function insideSkill(entries: TreeEntry[], path: string): boolean {
  if (path === '') return false;
  const above = new Set(ancestorsDownTo(path, ''));
  const unfollowed = linkPaths(entries);
  return entries.some((entry) => {
    if (entry.type !== 'file') return false;
    const file = trimSlashes(entry.path);
    return basename(file) === SKILL_FILE && above.has(dirname(file)) && !behindLink(file, unfollowed);
  });
}

/** Symlinks and submodules: a listing from a naive walker may hold entries behind them; they are not followed. */
function linkPaths(entries: TreeEntry[]): Set<string> {
  return new Set(
    entries.filter((e) => e.type === 'symlink' || e.type === 'submodule').map((e) => trimSlashes(e.path)),
  );
}

function behindLink(path: string, links: Set<string>): boolean {
  if (links.size === 0) return false;
  for (let slash = path.indexOf('/'); slash >= 0; slash = path.indexOf('/', slash + 1)) {
    if (links.has(path.slice(0, slash))) return true;
  }
  return false;
}

function inGitDir(path: string): boolean {
  return path.split('/').includes('.git');
}

function trimSlashes(path: string): string {
  return trimEdgeSlashes(path.replace(/^(?:\.\/)+/, ''));
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

function dirname(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? '' : path.slice(0, slash);
}

function isAtOrUnder(path: string, base: string): boolean {
  return base === '' || path === base || path.startsWith(`${base}/`);
}

/** Proper ancestors of `path` from its parent up to and including `base`. */
function ancestorsDownTo(path: string, base: string): string[] {
  const out: string[] = [];
  let current = path;
  while (current !== base && current !== '') {
    current = dirname(current);
    out.push(current);
    if (current === base) break;
  }
  return out;
}

/** Path order: plain code-unit comparison, stable across platforms and locales. */
function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
