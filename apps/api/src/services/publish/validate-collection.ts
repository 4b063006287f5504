import {
  caseWarnings,
  describeWarning,
  FrontmatterError,
  findSkillFolders,
  formatIdentity,
  parseIdentity,
  parseSkillMarkdown,
  reservedSkillPath,
  SKILL_FILE,
  skillFiles,
  strictProblems,
  type TreeEntry,
} from '@atskills/protocol';
import { countTokens } from '@atskills/protocol/tokens';
import { problem } from '../../problems.js';
import type { ExtractedArchive } from './extract-archive.js';
import type { PublishLimits } from './limits.js';
import { type ManifestFile, manifestRevision, sha256Hex, sortManifest } from './manifest.js';
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
// Exact token counts up to this body size; past it the count is extrapolated (the tokenizer is linear and
// a 50 MiB collection must not spend seconds here).
const EXACT_TOKEN_CHARS = 256 * 1024;

/**
 * Applies the publish rules to an unpacked archive: the leaf rule finds skills, each SKILL.md must pass the
 * frontmatter rules strictly, the collection must hold 1..maxSkills skills, and every skill must have a valid
 * identity. Throws the problem to answer with; returns what to store.
 */
export function validateCollection(
  archive: ExtractedArchive,
  target: { namespace: string; collection: string },
  limits: PublishLimits,
): ValidatedCollection {
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
  const skills: ValidatedSkill[] = [];
  const inSkills = new Set<string>();
  for (const folder of folders) {
    const file = folder === '' ? SKILL_FILE : `${folder}/${SKILL_FILE}`;
    const identity = skillIdentity(target, folder, problems, file);
    let doc: ReturnType<typeof parseSkillMarkdown> | undefined;
    try {
      // A root skill is named after its collection: that is the folder a member saves it into.
      doc = parseSkillMarkdown(archive.files.get(file) as Buffer, folder === '' ? target.collection : folder);
    } catch (err) {
      if (!(err instanceof FrontmatterError)) throw err;
      problems.push({ file, rule: err.code, message: err.message });
    }
    if (doc) {
      for (const warning of strictProblems(doc))
        problems.push({ file, rule: warning, message: describeWarning(warning) });
    }
    if (!doc || identity === undefined) continue;

    const files = skillFiles(entries, folder).map((entry) => {
      inSkills.add(entry.path);
      const content = archive.files.get(entry.path) as Buffer;
      const path = folder === '' ? entry.path : entry.path.slice(folder.length + 1);
      return { path, size: content.length, sha256: sha256Hex(content), content };
    });
    for (const f of files) {
      const reserved = reservedSkillPath(f.path);
      if (reserved) {
        const where = folder === '' ? f.path : `${folder}/${f.path}`;
        problems.push({ file: where, rule: 'reserved-path', message: reserved });
      }
    }
    sortManifest(files);
    skills.push({
      identity,
      path: folder.toLowerCase(),
      archivePath: folder,
      name: doc.name,
      description: doc.description,
      frontmatter: doc.frontmatter,
      body: doc.body,
      files,
      revision: manifestRevision(files),
      descriptionTokens: countTokens(doc.description),
      bodyTokens: estimateTokens(doc.body),
    });
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

function estimateTokens(text: string): number {
  if (text.length <= EXACT_TOKEN_CHARS) return countTokens(text);
  const sample = countTokens(text.slice(0, EXACT_TOKEN_CHARS));
  return Math.round((sample * text.length) / EXACT_TOKEN_CHARS);
}
