import { isAlias, isCollection, isPair, isScalar, parseDocument } from 'yaml';
import { FrontmatterError } from './errors.js';
import { FRONTMATTER_OPENING, splitFrontmatter } from './frontmatter-split.js';
import { trimTrailingSlashes } from './slashes.js';

/** A rule break that still lets a skill be indexed (but not published). */
export type FrontmatterWarning =
  | 'name-format'
  | 'name-too-long'
  | 'name-folder-mismatch'
  | 'description-too-long'
  | 'description-empty'
  | 'name-empty';

/** A parsed SKILL.md. */
export interface SkillDocument {
  name: string;
  description: string;
  frontmatter: Record<string, unknown>;
  body: string;
  warnings: FrontmatterWarning[];
}

/** Largest SKILL.md accepted at all (characters or bytes). */
export const MAX_SKILL_MARKDOWN = 5 * 1024 * 1024;
/** Largest frontmatter block: real ones are a few hundred bytes; this bounds YAML work on hostile input. */
export const MAX_FRONTMATTER = 64 * 1024;
/** Deepest collection nesting accepted in frontmatter. */
export const MAX_FRONTMATTER_DEPTH = 32;
/** Alias expansions allowed when converting YAML to values (defends against "billion laughs"). */
export const MAX_FRONTMATTER_ALIASES = 50;
export const MAX_NAME_LENGTH = 64;
export const MAX_DESCRIPTION_LENGTH = 1024;

const NAME_FORMAT = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** Parses a SKILL.md (BOM and CRLF tolerated); throws only FrontmatterError. */
export function parseSkillMarkdown(content: string | Uint8Array, folder: string): SkillDocument {
  const text = typeof content === 'string' ? content.replace(/^\uFEFF/, '') : decodeUtf8(content);
  if (text.length > MAX_SKILL_MARKDOWN) {
    throw new FrontmatterError('too-large', `SKILL.md is larger than ${MAX_SKILL_MARKDOWN} characters.`);
  }
  if (!FRONTMATTER_OPENING.test(text)) {
    if (/^---[ \t]*\r?$/.test(text)) {
      throw new FrontmatterError(
        'unterminated-frontmatter',
        'The frontmatter opened by "---" is never closed.',
      );
    }
    throw new FrontmatterError(
      'no-frontmatter',
      'SKILL.md must start with YAML frontmatter between "---" lines.',
    );
  }
  const parts = splitFrontmatter(text);
  if (!parts) {
    throw new FrontmatterError(
      'unterminated-frontmatter',
      'The frontmatter opened by "---" is never closed.',
    );
  }
  const { yamlText, body } = parts;
  // The YAML starts on the line after the opening `---`: error lines are reported as lines of SKILL.md.
  const frontmatter = parseYamlMapping(yamlText, 2);

  const name = frontmatter.name;
  const description = frontmatter.description;
  if (name === undefined || name === null)
    throw new FrontmatterError('missing-name', 'The frontmatter has no "name".');
  if (typeof name !== 'string') {
    throw new FrontmatterError('name-not-string', `"name" must be a string, not ${describe(name)}.`);
  }
  if (description === undefined || description === null) {
    throw new FrontmatterError('missing-description', 'The frontmatter has no "description".');
  }
  if (typeof description !== 'string') {
    throw new FrontmatterError(
      'description-not-string',
      `"description" must be a string, not ${describe(description)}.`,
    );
  }
  return { name, description, frontmatter, body, warnings: ruleBreaks(name, description, folder) };
}

/** Like parseSkillMarkdown, but returns the error instead of throwing it. */
export function tryParseSkillMarkdown(
  content: string | Uint8Array,
  folder: string,
): { ok: true; doc: SkillDocument } | { ok: false; error: FrontmatterError } {
  try {
    return { ok: true, doc: parseSkillMarkdown(content, folder) };
  } catch (error) {
    if (error instanceof FrontmatterError) return { ok: false, error };
    throw error;
  }
}

/** The rule breaks a publish must reject (every convention rule of SPEC 1.1, the folder-name match included). */
export function strictProblems(doc: SkillDocument): FrontmatterWarning[] {
  return [...doc.warnings];
}

/** A human sentence for a warning code, naming the rule. */
export function describeWarning(warning: FrontmatterWarning): string {
  switch (warning) {
    case 'name-format':
      return '"name" must be lowercase letters, digits and single hyphens, not starting or ending with a hyphen.';
    case 'name-too-long':
      return `"name" must be at most ${MAX_NAME_LENGTH} characters.`;
    case 'name-folder-mismatch':
      return '"name" should equal the name of the folder holding SKILL.md.';
    case 'description-too-long':
      return `"description" must be at most ${MAX_DESCRIPTION_LENGTH} characters.`;
    case 'description-empty':
      return '"description" must not be empty.';
    case 'name-empty':
      return '"name" must not be empty.';
  }
}

function ruleBreaks(name: string, description: string, folder: string): FrontmatterWarning[] {
  const warnings: FrontmatterWarning[] = [];
  const folderName = trimTrailingSlashes(folder).split('/').at(-1) ?? '';
  if (name === '') warnings.push('name-empty');
  else if (!NAME_FORMAT.test(name)) warnings.push('name-format');
  if ([...name].length > MAX_NAME_LENGTH) warnings.push('name-too-long');
  if (folderName !== '' && name !== folderName) warnings.push('name-folder-mismatch');
  if (description.trim() === '') warnings.push('description-empty');
  if ([...description].length > MAX_DESCRIPTION_LENGTH) warnings.push('description-too-long');
  return warnings;
}

function countNewlines(text: string, end: number): number {
  let count = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < end; i = text.indexOf('\n', i + 1)) count++;
  return count;
}

function decodeUtf8(bytes: Uint8Array): string {
  if (bytes.length > MAX_SKILL_MARKDOWN) {
    throw new FrontmatterError('too-large', `SKILL.md is larger than ${MAX_SKILL_MARKDOWN} bytes.`);
  }
  try {
    // TextDecoder drops a leading BOM by default.
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new FrontmatterError('not-utf8', 'SKILL.md is not valid UTF-8.');
  }
}

function parseYamlMapping(yamlText: string, firstLine: number): Record<string, unknown> {
  if (yamlText.length > MAX_FRONTMATTER) {
    throw new FrontmatterError('too-large', `The frontmatter is larger than ${MAX_FRONTMATTER} characters.`);
  }
  let value: unknown;
  try {
    const doc = parseDocument(yamlText, { version: '1.2', schema: 'core', prettyErrors: false });
    const [firstError] = doc.errors;
    if (firstError) {
      throw new FrontmatterError('invalid-yaml', `The frontmatter is not valid YAML: ${firstError.message}`, {
        line: firstLine + countNewlines(yamlText, firstError.pos[0]),
      });
    }
    if (depthOf(doc.contents) > MAX_FRONTMATTER_DEPTH) {
      throw new FrontmatterError(
        'too-deep',
        `The frontmatter nests deeper than ${MAX_FRONTMATTER_DEPTH} levels.`,
      );
    }
    value = doc.toJS({ maxAliasCount: MAX_FRONTMATTER_ALIASES });
  } catch (error) {
    if (error instanceof FrontmatterError) throw error;
    if (error instanceof ReferenceError && /alias/i.test(error.message)) {
      throw new FrontmatterError('too-many-aliases', 'The frontmatter expands too many YAML aliases.');
    }
    if (error instanceof RangeError) {
      throw new FrontmatterError('too-deep', 'The frontmatter nests too deeply to parse.');
    }
    // Anything else the YAML library raises is still a frontmatter that does not parse.
    throw new FrontmatterError('invalid-yaml', `The frontmatter is not valid YAML: ${String(error)}`);
  }
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new FrontmatterError('not-a-mapping', 'The frontmatter must be a YAML mapping of keys to values.');
  }
  return value as Record<string, unknown>;
}

/** Nesting depth of a YAML node tree, walked without recursion so hostile input cannot blow the stack. */
function depthOf(root: unknown): number {
  let deepest = 0;
  const stack: { node: unknown; depth: number }[] = [{ node: root, depth: 0 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop() as { node: unknown; depth: number };
    if (depth > deepest) deepest = depth;
    if (depth > MAX_FRONTMATTER_DEPTH) break;
    if (isCollection(node)) {
      for (const item of node.items) stack.push({ node: item, depth: depth + 1 });
    } else if (isPair(node)) {
      stack.push({ node: node.key, depth }, { node: node.value, depth });
    } else if (isScalar(node) || isAlias(node)) {
      // leaves
    }
  }
  return deepest;
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'a mapping' : `the ${typeof value} ${JSON.stringify(value)}`;
}
