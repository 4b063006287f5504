// A skill folder's files -> what the hub indexes of the skill. The crawler, publish validation and the test
// seed all build skills through this one function, so a crawled and a published skill are indexed alike.
// It sits behind its own entry (`@atskills/protocol/content`): it loads the tokenizer and the safety rules,
// which the client's start-up must not pay for.
import { createHash } from 'node:crypto';
import {
  describeWarning,
  type FrontmatterWarning,
  MAX_SKILL_MARKDOWN,
  tryParseSkillMarkdown,
} from '../frontmatter.js';
import { SKILL_FILE } from '../leaf-rule.js';
import { scanSkillFiles } from '../safety/scan.js';
import type { SafetyFinding } from '../safety/types.js';
import { reservedSkillPath } from '../source-stamp.js';
import { countTokens } from '../tokens.js';

/** One file of a skill folder: its bytes, or (not downloaded) its size and why it was left out. */
export type ContentFile<B extends Uint8Array = Uint8Array> =
  | { path: string; content: B }
  | { path: string; content: null; size: number; skipped: string };

/** A skill folder as found by the leaf rule. */
export interface SkillContentInput<B extends Uint8Array = Uint8Array> {
  /** The skill's folder relative to the root of its repository or collection ('' for a root skill). */
  folder: string;
  /** The repository's or collection's name: a root skill's folder name (the folder it is saved into). */
  rootName: string;
  /** Every file of the skill (the leaf rule's `skillFiles`), paths relative to the root. */
  files: readonly ContentFile<B>[];
}

/**
 * A rule a skill breaks: the file (relative to the root), a stable code, a sentence, the line when known.
 * `error`: the SKILL.md cannot be indexed, or a file was left out (`reserved-path`); `warning`: a
 * convention broken (indexed, refused by publish).
 */
export interface SkillProblem {
  path: string;
  code: string;
  message: string;
  line?: number;
  severity: 'error' | 'warning';
}

/** A file of the skill as stored: relative to the skill folder; `skipped` when not downloaded. */
export interface SkillContentFile {
  path: string;
  size: number;
  sha256: string;
  skipped?: string;
}

/** What the index stores of one skill's content. */
export interface SkillContent<B extends Uint8Array = Uint8Array> {
  /** The folder's name when SKILL.md cannot be parsed (`parseError` says why). */
  name: string;
  description: string;
  frontmatter: Record<string, unknown>;
  body: string;
  warnings: FrontmatterWarning[];
  parseError: { code: string; message: string } | null;
  /** Sorted by path (code-unit order). */
  files: SkillContentFile[];
  /** The downloaded files' bytes, one per file. */
  blobs: { sha256: string; size: number; content: B }[];
  descriptionTokens: number;
  bodyTokens: number;
  /** sha256 over the sorted (path, sha256) list: the key a safety verdict is cached under. */
  contentHash: string;
  /** The safety scanner's findings (null when the scan was deferred with `scan: false`). */
  flags: SafetyFinding[] | null;
  problems: SkillProblem[];
}

// Exact token counts up to this many characters; past it the count is extrapolated from that prefix (the
// count is linear, long runs a chunk at a time (tokens.ts), and a hostile 5 MiB body must not cost seconds
// in a crawl job or a publish request).
export const EXACT_TOKEN_CHARS = 256 * 1024;

/** The token policy of the index: o200k_base, exact up to EXACT_TOKEN_CHARS, extrapolated past it. */
export function indexTokens(text: string): number {
  if (text.length <= EXACT_TOKEN_CHARS) return countTokens(text);
  const sample = countTokens(text.slice(0, EXACT_TOKEN_CHARS));
  return Math.round((sample * text.length) / EXACT_TOKEN_CHARS);
}

const sha256Hex = (data: Uint8Array | string) => createHash('sha256').update(data).digest('hex');

/** The content hash of a skill: sha256 over the sorted `path\0sha256` lines of its files. */
export function skillContentHash(files: readonly { path: string; sha256: string }[]): string {
  const lines = files
    .map((f) => `${f.path}\0${f.sha256}`)
    .sort()
    .join('\n');
  return sha256Hex(lines);
}

const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

/**
 * Builds what the index stores of a skill from its folder's files: paths relative to the folder, file
 * hashes, the parsed SKILL.md (or its parse error) with the convention warnings, token counts, the content
 * hash and the safety scan. Never throws on content: every rule broken is in `problems`.
 * `scan: false` defers the scan (the crawler first looks the content hash up among cached verdicts and
 * then calls scanSkillContent only for the misses).
 */
export function skillContent<B extends Uint8Array>(
  input: SkillContentInput<B>,
  options: { scan?: boolean } = {},
): SkillContent<B> {
  const { folder } = input;
  const relative = (path: string) => (folder === '' ? path : path.slice(folder.length + 1));
  const skillFilePath = folder === '' ? SKILL_FILE : `${folder}/${SKILL_FILE}`;
  const files: SkillContentFile[] = [];
  const blobs: SkillContent<B>['blobs'] = [];
  const reserved: SkillProblem[] = [];
  let skillMarkdown: ContentFile<B> | undefined;
  for (const file of input.files) {
    const path = relative(file.path);
    // A shipped .source or nested .atskills/ would break every saved copy: never indexed or served.
    const why = reservedSkillPath(path);
    if (why) {
      reserved.push({ path: file.path, code: 'reserved-path', message: why, severity: 'error' });
      continue;
    }
    if (path === SKILL_FILE) skillMarkdown = file;
    if ('skipped' in file) {
      files.push({ path, size: file.size, sha256: '', skipped: file.skipped });
      continue;
    }
    const hash = sha256Hex(file.content);
    files.push({ path, size: file.content.length, sha256: hash });
    blobs.push({ sha256: hash, size: file.content.length, content: file.content });
  }
  files.sort(byPath);
  const base = {
    files,
    blobs,
    contentHash: skillContentHash(files),
    name: '',
    description: '',
    frontmatter: {},
    body: '',
    warnings: [],
    descriptionTokens: 0,
    bodyTokens: 0,
  };
  let content: Omit<SkillContent<B>, 'flags'>;
  if (!skillMarkdown || 'skipped' in skillMarkdown) {
    // Files are left out of a download only for their size.
    const reason = skillMarkdown ? skillMarkdown.skipped : 'missing';
    const parseError = { code: 'too-large', message: `SKILL.md is ${reason} and was not downloaded.` };
    content = { ...base, parseError, problems: [{ path: skillFilePath, ...parseError, severity: 'error' }] };
  } else {
    // A root skill is named after its repository or collection: the folder a user saves it into.
    const parsed = tryParseSkillMarkdown(skillMarkdown.content, folder === '' ? input.rootName : folder);
    if (!parsed.ok) {
      const parseError = { code: parsed.error.code, message: parsed.error.message };
      const line = parsed.error.details?.line;
      const body = unparsedBody(skillMarkdown.content);
      content = {
        ...base,
        // As the client reads such a skill over git: named after its folder, the whole file its body.
        name: (folder === '' ? input.rootName : folder).split('/').at(-1) ?? '',
        body,
        bodyTokens: indexTokens(body),
        parseError,
        problems: [
          {
            path: skillFilePath,
            ...parseError,
            ...(typeof line === 'number' ? { line } : {}),
            severity: 'error',
          },
        ],
      };
    } else {
      const doc = parsed.doc;
      content = {
        ...base,
        name: doc.name,
        description: doc.description,
        frontmatter: doc.frontmatter,
        body: doc.body,
        warnings: doc.warnings,
        parseError: null,
        descriptionTokens: indexTokens(doc.description),
        bodyTokens: indexTokens(doc.body),
        problems: doc.warnings.map((code) => ({
          path: skillFilePath,
          code,
          message: describeWarning(code),
          severity: 'warning' as const,
        })),
      };
    }
  }
  content.problems.push(...reserved);
  return { ...content, flags: options.scan === false ? null : scanSkillContent(content) };
}

/**
 * The body of a SKILL.md whose frontmatter does not parse: the whole text, as the client injects it (SPEC
 * 1.1: such a skill still resolves). Empty when it is no text to store: over the size limit, not UTF-8, or
 * holding NUL (which Postgres text refuses).
 */
function unparsedBody(bytes: Uint8Array): string {
  if (bytes.length > MAX_SKILL_MARKDOWN) return '';
  let text: string;
  try {
    // Drops a leading BOM, as parsing does.
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return '';
  }
  return text.includes('\0') ? '' : text;
}

/**
 * The safety scan of a skill's content: every downloaded file that is UTF-8 text (binary files cannot carry
 * instructions to a model), plus the description.
 */
export function scanSkillContent(
  content: Pick<SkillContent, 'files' | 'blobs' | 'description'>,
): SafetyFinding[] {
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const bytesOf = new Map(content.blobs.map((b) => [b.sha256, b.content]));
  const texts: { path: string; content: string }[] = [];
  for (const file of content.files) {
    const bytes = file.skipped === undefined ? bytesOf.get(file.sha256) : undefined;
    if (!bytes) continue;
    try {
      texts.push({ path: file.path, content: utf8.decode(bytes) });
    } catch {
      // Not UTF-8 text: nothing the text rules can read.
    }
  }
  return scanSkillFiles(texts, { description: content.description });
}
