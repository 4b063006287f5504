import type { ReportEntry } from '@atskills/db';
import { skillFilesOf, type TreeEntry } from '@atskills/protocol';
import type { SkillContent, SkillContentInput } from '@atskills/protocol/content';
import type { ContentPool } from '../content/content-pool.js';
import type { SkillFolder } from './leaf-rule.js';

/** Folders per message to a content process: jobs interleave, and one message stays a few MiB. */
const CONTENT_CHUNK = 32;

/** `work` over the items in chunks sent at once (the pool spreads them), results in item order. */
export async function inChunks<T, R>(items: T[], work: (chunk: T[]) => Promise<R[]>): Promise<R[]> {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += CONTENT_CHUNK) chunks.push(items.slice(i, i + CONTENT_CHUNK));
  return (await Promise.all(chunks.map(work))).flat();
}

/**
 * The content phase: `skillContent` (parse, token counts, hashes; the scan is the verdicts phase's) of
 * every changed folder, on the content pool, in folder order. What it cannot index goes into `errors`.
 * `rootName` names a root skill (the repository, or a linked collection).
 */
export async function buildContent(
  pool: ContentPool,
  entries: TreeEntry[],
  changed: SkillFolder[],
  blobs: Map<string, Buffer>,
  options: { maxBytes: number; rootName: string },
  errors: ReportEntry[],
): Promise<SkillContent<Buffer>[]> {
  // Every changed folder's files in one pass over the listing (a repository of hundreds of skills stays linear).
  const filesOf = skillFilesOf(
    entries,
    changed.map((folder) => folder.path),
  );
  const inputs = changed.map((folder) =>
    folderInput(
      folder.path,
      servableFiles(folder.path, filesOf.get(folder.path)!, errors),
      blobs,
      options.maxBytes,
      options.rootName,
    ),
  );
  const contents = await inChunks(inputs, (chunk) => pool.content(chunk));
  for (const content of contents) reportContentProblems(content, errors);
  return contents;
}

// SPEC 1.3: a path segment holds any character but `/`, the backslash and control characters (C0, DEL, C1).
const UNSERVABLE = /[\\\u0000-\u001f\u007f-\u009f]/;

/**
 * The files of a skill that a client can unpack: one whose path inside the skill holds a backslash or a
 * control character (which a client reads as a separator, or refuses) is left out of the skill, with a
 * problem naming it, as a reserved path is; the rest of the skill is indexed.
 */
function servableFiles(folder: string, files: TreeEntry[], errors: ReportEntry[]): TreeEntry[] {
  return files.filter((file) => {
    const inSkill = folder === '' ? file.path : file.path.slice(folder.length + 1);
    const bad = UNSERVABLE.exec(inSkill)?.[0];
    if (bad === undefined) return true;
    errors.push({
      path: file.path,
      code: 'invalid-path',
      message: `${JSON.stringify(inSkill)} holds ${bad === '\\' ? 'a backslash' : 'a control character'}, which no path in a skill may (SPEC 1.3); skipped`,
    });
    return false;
  });
}

/** What skillContent needs of one skill folder: its files (skillFilesOf), with the fetched blobs. */
function folderInput(
  folder: string,
  entries: TreeEntry[],
  blobs: Map<string, Buffer>,
  maxBytes: number,
  rootName: string,
): SkillContentInput<Buffer> {
  const files = entries.map((entry) => {
    // Only blobs over the limit are left out of the fetch; their size is known to exceed it, not exactly.
    const content = entry.sha ? blobs.get(entry.sha) : undefined;
    return content
      ? { path: entry.path, content }
      : { path: entry.path, content: null, size: 0, skipped: `larger than ${maxBytes} bytes` };
  });
  return { folder, rootName, files };
}

/** The content's problems that the report lists, appended to `errors`. */
function reportContentProblems(content: SkillContent<Buffer>, errors: ReportEntry[]): void {
  for (const problem of content.problems) {
    if (problem.code === 'reserved-path') {
      errors.push({ path: problem.path, code: problem.code, message: `${problem.message}; skipped` });
    } else if (problem.severity === 'error') {
      errors.push({
        path: problem.path,
        code: problem.code,
        message: problem.message,
        ...(problem.line !== undefined ? { line: problem.line } : {}),
      });
    }
  }
}
