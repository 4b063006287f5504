import {
  caseWarnings,
  findSkillFolders,
  formatIdentity,
  parseIdentity,
  type SafetyFinding,
  SKILL_FILE,
  skillFilesOf,
  type TreeEntry,
} from '@atskills/protocol';
import { type SkillContent, skillContent } from '@atskills/protocol/content';
import { problem } from '../../problems.js';
import { TimeSlicer } from '../../runtime/time-slice.js';
import type { ExtractedArchive } from './extract-archive.js';
import type { PublishLimits } from './limits.js';
import { type ManifestFile, manifestRevision, sortManifest } from './manifest.js';
import { type ScanInput, scanContents } from './scan-thread.js';
import { showPath } from './show-path.js';

/** A skill of a collection that passed every publish rule. */
export interface ValidatedSkill {
  identity: string;
  /** Folder inside the collection, lowercase like the identity ('' for a root skill). */
  path: string;
  /** Folder inside the archive as sent (case kept), for messages. */
  archivePath: string;
  name: string;
  description: string;
  frontmatter: Record<string, unknown>;
  body: string;
  /** Files relative to the skill folder, with their contents. */
  files: (ManifestFile & { content: Buffer })[];
  revision: string;
  descriptionTokens: number;
  bodyTokens: number;
  /** The safety scanner's findings (readers see them; they do not block a publish). */
  flags: SafetyFinding[];
  /** The key safety verdicts and dispute decisions are stored under (`skillContentHash` of its files). */
  contentHash: string;
}

/** A collection ready to store. */
export interface ValidatedCollection {
  skills: ValidatedSkill[];
  /** Files relative to the collection root (only files that belong to a skill). */
  manifest: ManifestFile[];
  revision: string;
  sizeBytes: number;
  blobs: Map<string, Buffer>;
  warnings: { code: string; message: string; path?: string }[];
}

/** One rule a skill broke, naming its file. */
export interface SkillProblem {
  file: string;
  rule: string;
  message: string;
}

// Report this many skill problems at once, so a publisher can fix a batch per round trip.
const MAX_REPORTED_PROBLEMS = 50;

/**
 * Applies the publish rules to an unpacked archive: the leaf rule finds skills, each SKILL.md must pass the
 * frontmatter rules strictly, the collection must hold 1..maxSkills skills, and every skill must have a valid
 * identity; then the safety scan (`scan`; scanContents: in a worker thread when large). Throws the problem to
 * answer with; returns what to store.
 */
export async function validateCollection(
  archive: ExtractedArchive,
  target: { namespace: string; collection: string },
  limits: PublishLimits,
  scan: (contents: readonly ScanInput[]) => Promise<SafetyFinding[][]> = scanContents,
): Promise<ValidatedCollection> {
  const entries: TreeEntry[] = [
    ...[...archive.dirs].map((path) => ({ path, type: 'dir' as const })),
    ...[...archive.files].map(([path, data]) => ({ path, type: 'file' as const, size: data.length })),
  ];
  const folders = findSkillFolders(entries);
  if (folders.length === 0) {
    throw problem('no-skills', `The archive holds no ${SKILL_FILE}; a collection needs at least one skill.`);
  }
  if (folders.length > limits.maxSkills) {
    throw problem(
      'too-many-skills',
      `The archive holds ${folders.length} skills; a collection may hold at most ${limits.maxSkills}.`,
      {
        count: folders.length,
        limit: limits.maxSkills,
      },
    );
  }

  const problems: SkillProblem[] = [];
  const accepted: { identity: string; folder: string; content: SkillContent<Buffer> }[] = [];
  const inSkills = new Set<string>();
  const filesOf = skillFilesOf(entries, folders);
  // Parsing and counting the tokens of 1,000 skills took 0.6 s: requests are answered in between.
  const slice = new TimeSlicer();
  for (const folder of folders) {
    if (slice.due()) await slice.pause();
    const file = folder === '' ? SKILL_FILE : `${folder}/${SKILL_FILE}`;
    const identity = skillIdentity(target, folder, problems, file);
    const files = filesOf.get(folder)!.map((entry) => {
      inSkills.add(entry.path);
      return { path: entry.path, content: archive.files.get(entry.path) as Buffer };
    });
    // The same content rules as a crawl (a root skill is named after its collection); publishing refuses
    // every problem, the convention warnings included. The scan waits until the whole collection passed.
    const content = skillContent({ folder, rootName: target.collection, files }, { scan: false });
    // Reserved paths are reported only for a skill that is otherwise sound.
    const asProblem = (p: (typeof content.problems)[number]) => ({
      file: p.path,
      rule: p.code,
      message: p.message,
    });
    const reserved = content.problems.filter((p) => p.code === 'reserved-path');
    problems.push(...content.problems.filter((p) => p.code !== 'reserved-path').map(asProblem));
    if (content.parseError || identity === undefined) continue;
    problems.push(...reserved.map(asProblem));
    accepted.push({ identity, folder, content });
  }
  if (problems.length > 0) {
    const first = problems[0] as SkillProblem;
    const more =
      problems.length > 1
        ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? 's' : ''})`
        : '';
    throw problem('invalid-skill', `${first.file}: ${first.rule}: ${first.message}${more}`, {
      file: first.file,
      rule: first.rule,
      errors: problems.slice(0, MAX_REPORTED_PROBLEMS),
    });
  }

  const flags = await scan(accepted.map((a) => a.content));
  const skills = accepted.map(({ identity, folder, content }, index): ValidatedSkill => {
    const bytesOf = new Map(content.blobs.map((b) => [b.sha256, b.content]));
    const files = content.files.map((f) => ({
      path: f.path,
      size: f.size,
      sha256: f.sha256,
      content: bytesOf.get(f.sha256) as Buffer,
    }));
    return {
      identity,
      path: folder.toLowerCase(),
      archivePath: folder,
      name: content.name,
      description: content.description,
      frontmatter: content.frontmatter,
      body: content.body,
      files,
      revision: manifestRevision(files),
      descriptionTokens: content.descriptionTokens,
      bodyTokens: content.bodyTokens,
      flags: flags[index]!,
      contentHash: content.contentHash,
    };
  });

  const warnings: ValidatedCollection['warnings'] = [];
  const outside = [...archive.files.keys()].filter((path) => !inSkills.has(path)).sort();
  if (outside.length > 0) {
    warnings.push({
      code: 'outside-skills',
      message: `${outside.length} file${outside.length > 1 ? 's are' : ' is'} outside every skill folder and not published (${outside.slice(0, 5).map(showPath).join(', ')}${outside.length > 5 ? ', ...' : ''}).`,
    });
  }
  for (const folder of caseWarnings(entries)) {
    warnings.push({
      code: 'wrong-case-skill-file',
      path: folder,
      message: `${showPath(folder)} holds a "skill.md" in the wrong case; only ${SKILL_FILE} makes a skill.`,
    });
  }

  const blobs = new Map<string, Buffer>();
  const manifest: ManifestFile[] = [];
  let sizeBytes = 0;
  for (const s of skills) {
    for (const f of s.files) {
      blobs.set(f.sha256, f.content);
      manifest.push({
        path: s.archivePath === '' ? f.path : `${s.archivePath}/${f.path}`,
        size: f.size,
        sha256: f.sha256,
      });
      sizeBytes += f.size;
    }
  }
  sortManifest(manifest);
  return { skills, manifest, revision: manifestRevision(manifest), sizeBytes, blobs, warnings };
}

/** `hub:namespace/collection[/path]` for a skill folder, or undefined (with a problem) if it makes no identity. */
function skillIdentity(
  target: { namespace: string; collection: string },
  folder: string,
  problems: SkillProblem[],
  file: string,
): string | undefined {
  const path = [
    target.namespace,
    target.collection,
    ...(folder === '' ? [] : folder.toLowerCase().split('/')),
  ];
  const canonical = formatIdentity('hub', path.join('/'));
  try {
    // Percent-encode each segment so the identity parser sees exactly these segments.
    const parsed = parseIdentity(formatIdentity('hub', path.map(encodeURIComponent).join('/')));
    if (parsed.identity === canonical) return canonical;
    problems.push({
      file,
      rule: 'bad-identity',
      message: `The folder makes the identity ${canonical}, which does not normalize to itself.`,
    });
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    problems.push({
      file,
      rule: 'bad-identity',
      message: `The folder ${showPath(folder)} cannot be an identity: ${reason}`,
    });
  }
  return undefined;
}
