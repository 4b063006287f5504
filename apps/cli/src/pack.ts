import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import {
  describeWarning,
  findSkillFolders,
  reservedSkillPath,
  SKILL_FILE,
  skillFilesOf,
  strictProblems,
  type TreeEntry,
  tryParseSkillMarkdown,
} from '@atskills/protocol';
import { ResolveError, walkFolder } from '@atskills/protocol/node';
import ignore, { type Ignore } from 'ignore';
import { Pack, Parser, type ReadEntry } from 'tar';

/** One skill of a collection about to be published. */
export interface PlannedSkill {
  path: string;
  name: string;
  files: number;
  bytes: number;
}

/** What `publish` will upload: the skills by the leaf rule, their files, and what was left out. */
export interface PublishPlan {
  folder: string;
  skills: PlannedSkill[];
  files: string[];
  bytes: number;
  /** Symlinks and special files inside skills, which are never published. */
  skipped: string[];
  /** Files a `.gitignore` of the folder names (as `git add` would leave them out): not published. */
  ignored: string[];
  /** Files the hub refuses in a skill (a saved copy's `.source`, a nested `.atskills/`): not published. */
  reserved: string[];
}

/** Publishing options: the collection a root SKILL.md becomes (its name must be the collection's). */
export interface PlanOptions {
  collection?: string;
}

/**
 * The entries a `.gitignore` inside `root` does not name, and those it does (files only): each `.gitignore`
 * applies to its folder and below, as git reads them. A team's skill folder is often a work tree with
 * secrets, logs and dependencies ignored; uploading them would surprise anyone.
 */
async function withoutIgnored(
  root: string,
  entries: TreeEntry[],
): Promise<{ kept: TreeEntry[]; ignored: string[] }> {
  const rules = new Map<string, Ignore>();
  for (const entry of entries) {
    if (entry.type !== 'file' || path.posix.basename(entry.path) !== '.gitignore') continue;
    const dir = path.posix.dirname(entry.path);
    rules.set(dir === '.' ? '' : dir, ignore().add(await readFile(path.join(root, entry.path), 'utf8')));
  }
  if (rules.size === 0) return { kept: entries, ignored: [] };
  const isIgnored = (entry: TreeEntry) => {
    for (const [dir, rule] of rules) {
      if (dir !== '' && !entry.path.startsWith(`${dir}/`)) continue;
      const inDir = dir === '' ? entry.path : entry.path.slice(dir.length + 1);
      if (rule.ignores(entry.type === 'dir' ? `${inDir}/` : inDir)) return true;
    }
    return false;
  };
  const kept: TreeEntry[] = [];
  const ignored: string[] = [];
  for (const entry of entries) {
    if (!isIgnored(entry)) kept.push(entry);
    else if (entry.type === 'file') ignored.push(entry.path);
  }
  return { kept, ignored };
}

/**
 * Plans a publish: walks the folder with the leaf rule and validates every SKILL.md as the hub will
 * (SPEC 1.1), refusing with the file and the rule when one is invalid.
 */
export async function planPublish(folder: string, options: PlanOptions = {}): Promise<PublishPlan> {
  const root = path.resolve(folder);
  let walked: TreeEntry[];
  try {
    walked = await walkFolder(root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EILSEQ')
      throw new ResolveError('usage', `Cannot publish: ${(error as Error).message}.`);
    throw error;
  }
  const { kept: entries, ignored } = await withoutIgnored(root, walked);
  const skillFolders = findSkillFolders(entries);
  if (skillFolders.length === 0)
    throw new ResolveError(
      'usage',
      `${root} holds no ${SKILL_FILE} (a skill is a folder holding ${SKILL_FILE}).`,
    );
  const problems: string[] = [];
  const reserved: string[] = [];
  const skills: PlannedSkill[] = [];
  const files: string[] = [];
  let bytes = 0;
  const filesOf = skillFilesOf(entries, skillFolders);
  for (const skill of skillFolders) {
    const file = skill === '' ? SKILL_FILE : `${skill}/${SKILL_FILE}`;
    // A root SKILL.md is the collection's own skill: named after the collection, not the local folder.
    const folderName = skill === '' ? (options.collection ?? path.basename(root)) : path.basename(skill);
    const parsed = tryParseSkillMarkdown(await readFile(path.join(root, file)), folderName);
    if (!parsed.ok) {
      problems.push(`${file}: ${parsed.error.message} [${parsed.error.code}]`);
      continue;
    }
    for (const problem of strictProblems(parsed.doc))
      problems.push(`${file}: ${describeWarning(problem)} [${problem}]`);
    const own = filesOf.get(skill)!.filter((f) => {
      const inSkill = skill === '' ? f.path : f.path.slice(skill.length + 1);
      if (!reservedSkillPath(inSkill)) return true;
      reserved.push(f.path);
      return false;
    });
    const size = own.reduce((sum, f) => sum + (f.size ?? 0), 0);
    skills.push({ path: skill, name: parsed.doc.name, files: own.length, bytes: size });
    files.push(...own.map((f) => f.path));
    bytes += size;
  }
  if (problems.length > 0)
    throw new ResolveError('usage', `Cannot publish, fix these first:\n  ${problems.join('\n  ')}`, {
      problems,
    });
  const inSkills = (p: string) => skillFolders.some((s) => s === '' || p.startsWith(`${s}/`));
  const skipped = entries
    .filter((e) => (e.type === 'symlink' || e.type === 'other') && inSkills(e.path))
    .map((e) => e.path);
  return { folder: root, skills, files, bytes, skipped, ignored, reserved };
}

/**
 * Packs the planned files into a gzip tar (paths relative to the collection root, no owners), then reads
 * the archive back and refuses it unless it holds exactly the planned files, so a skill never goes up under
 * another identity.
 */
export async function packPlan(plan: PublishPlan): Promise<Buffer> {
  // Not tar's create(): it reads a listed path starting with "@" as an archive to append (SPEC 1.3 names
  // `@scope/` folders). preservePaths: a colon is legal in a folder name, but tar strips `a:` as a Windows
  // drive root, which would publish `a:b/x` as `b/x`.
  const pack = new Pack({
    gzip: true,
    cwd: plan.folder,
    portable: true,
    noDirRecurse: true,
    follow: false,
    preservePaths: true,
  });
  for (const file of plan.files) pack.add(file);
  pack.end();
  const chunks: Buffer[] = [];
  for await (const chunk of pack) chunks.push(Buffer.from(chunk as Buffer));
  const archive = Buffer.concat(chunks);
  checkPackedPaths(plan.files, packedFiles(archive));
  return archive;
}

/** The entries of a gzip tar as a reader sees them: regular files by path, anything else marked. */
function packedFiles(archive: Buffer): string[] {
  const paths: string[] = [];
  const parser = new Parser({
    onReadEntry: (entry: ReadEntry) => {
      // A file replaced by a link or folder since planning is not what was planned either.
      paths.push(entry.type === 'File' ? entry.path : `${entry.path} (${entry.type})`);
      entry.resume();
    },
  });
  parser.end(gunzipSync(archive));
  return paths;
}

/** Throws unless the packed entry paths are exactly the planned files (order aside). */
export function checkPackedPaths(planned: string[], packed: string[]): void {
  const inArchive = new Set(packed);
  const inPlan = new Set(planned);
  const missing = planned.filter((p) => !inArchive.has(p));
  const extra = packed.filter((p) => !inPlan.has(p));
  if (missing.length === 0 && extra.length === 0 && packed.length === planned.length) return;
  const said = [
    ...missing.map((p) => `${p} is missing`),
    ...extra.map((p) => `${p} was not planned`),
    ...(missing.length + extra.length === 0 ? ['a file is packed twice'] : []),
  ];
  throw new ResolveError(
    'bad-archive',
    `The archive does not hold the planned files (a tar quirk?): ${said.join('; ')}. Nothing was published.`,
    { missing, extra },
  );
}
