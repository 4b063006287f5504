import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  describeWarning,
  findSkillFolders,
  SKILL_FILE,
  skillFilesOf,
  strictProblems,
  tryParseSkillMarkdown,
} from '@atskills/protocol';
import { ResolveError, walkFolder } from '@atskills/protocol/node';
import { create } from 'tar';

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
}

/**
 * Plans a publish: walks the folder with the leaf rule and validates every SKILL.md as the hub will
 * (SPEC 1.1), refusing with the file and the rule when one is invalid.
 */
export async function planPublish(folder: string): Promise<PublishPlan> {
  const root = path.resolve(folder);
  const entries = await walkFolder(root);
  const skillFolders = findSkillFolders(entries);
  if (skillFolders.length === 0)
    throw new ResolveError(
      'usage',
      `${root} holds no ${SKILL_FILE} (a skill is a folder holding ${SKILL_FILE}).`,
    );
  const problems: string[] = [];
  const skills: PlannedSkill[] = [];
  const files: string[] = [];
  let bytes = 0;
  const filesOf = skillFilesOf(entries, skillFolders);
  for (const skill of skillFolders) {
    const file = skill === '' ? SKILL_FILE : `${skill}/${SKILL_FILE}`;
    const folderName = path.basename(skill === '' ? root : skill);
    const parsed = tryParseSkillMarkdown(await readFile(path.join(root, file)), folderName);
    if (!parsed.ok) {
      problems.push(`${file}: ${parsed.error.message} [${parsed.error.code}]`);
      continue;
    }
    for (const problem of strictProblems(parsed.doc))
      problems.push(`${file}: ${describeWarning(problem)} [${problem}]`);
    const own = filesOf.get(skill)!;
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
  return { folder: root, skills, files, bytes, skipped };
}

/** Packs the planned files into a gzip tar (paths relative to the collection root, no owners). */
export async function packPlan(plan: PublishPlan): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const stream = create(
    { gzip: true, cwd: plan.folder, portable: true, noDirRecurse: true, follow: false },
    plan.files,
  );
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}
