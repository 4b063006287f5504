import ignore, { type Ignore } from 'ignore';
import { IdentityError, ProtocolError } from './errors.js';
import { formatIdentity, parseIdentity } from './identity.js';
import { trimEdgeSlashes } from './slashes.js';

// `.atskills/.autotrigger` (SPEC 1.5): .gitignore syntax. Plain lines select project skills through the `ignore`
// package (the reference implementation of gitignore matching in JS, so globs, `dir/`, anchoring and `!` behave
// exactly like git); lines starting with `@` follow cloud skills.

/** One meaningful line of `.atskills/.autotrigger`. */
export interface AutotriggerRule {
  line: number;
  text: string;
  negated: boolean;
  kind: 'local' | 'cloud';
  /** local: a gitignore pattern (without the leading `!`). cloud: the identity text as written. */
  pattern: string;
  /** cloud: the canonical identity. */
  identity?: string;
  /** cloud: a trailing `/` follows every skill of that folder's menu (SPEC 1.5), within K. */
  directory?: true;
}

/** One identity `.autotrigger` selects, at the line that selected it first. */
export interface AutotriggerEntry {
  identity: string;
  line: number;
  /** A whole-directory cloud line: the caller expands the menu of `identity` (local first). */
  directory?: true;
}

/** A problem with one line of the file. */
export interface AutotriggerWarning {
  line: number;
  text: string;
  message: string;
}

/** Parses `.autotrigger` content into rules (blank lines and `#` comments dropped) and warnings. */
export function parseAutotrigger(content: string): {
  rules: AutotriggerRule[];
  warnings: AutotriggerWarning[];
} {
  const rules: AutotriggerRule[] = [];
  const warnings: AutotriggerWarning[] = [];
  content.split(/\r?\n/).forEach((raw, index) => {
    const line = index + 1;
    const text = trimAutotriggerLine(raw);
    if (text === '' || text.startsWith('#')) return;
    const negated = text.startsWith('!');
    const pattern = negated ? text.slice(1) : text;
    if (pattern === '') {
      warnings.push({ line, text, message: 'A lone "!" negates nothing.' });
      return;
    }
    if (!pattern.startsWith('@')) {
      rules.push({ line, text, negated, kind: 'local', pattern });
      return;
    }
    try {
      const identity = cloudIdentity(pattern.slice(1));
      rules.push({
        line,
        text,
        negated,
        kind: 'cloud',
        pattern,
        identity,
        ...(pattern.endsWith('/') ? { directory: true as const } : {}),
      });
    } catch (error) {
      if (!(error instanceof IdentityError)) throw error;
      warnings.push({ line, text, message: `Not a skill identity (${error.code}): ${error.message}` });
    }
  });
  return { rules, warnings };
}

/**
 * Expands `.autotrigger` against the project's skill folders (relative to .atskills, e.g. 'team/a',
 * 'gh/o/r/p') into identities in file order: each glob or directory line contributes its skills sorted by
 * path at the line's place; a skill appears once, at its first line; a line that selects nothing warns.
 * A whole-directory cloud line stays one entry marked `directory` (its menu needs resolving); `excluded`
 * holds the cloud identities a negating line has the last word on, which no directory expansion may add.
 */
export function expandAutotrigger(
  content: string,
  localSkills: string[],
): { entries: AutotriggerEntry[]; warnings: AutotriggerWarning[]; excluded: string[] } {
  const { rules, warnings } = parseAutotrigger(content);
  const folders = [...new Set(localSkills.map(trimSlashes).filter((f) => f !== ''))].sort();
  const everyLocalLine = ignore();
  for (const rule of rules) {
    if (rule.kind === 'local') addPattern(everyLocalLine, rule.negated ? `!${rule.pattern}` : rule.pattern);
  }
  const selected = new Set(folders.filter((folder) => matches(everyLocalLine, folder)));
  // For cloud lines the last line naming an identity decides, as the last matching pattern does in gitignore.
  const lastCloudLineNegates = new Map<string, boolean>();
  for (const rule of rules) if (rule.kind === 'cloud') lastCloudLineNegates.set(cloudKey(rule), rule.negated);

  const entries: AutotriggerEntry[] = [];
  const seen = new Set<string>();
  const add = (identity: string, line: number, directory = false) => {
    const key = directory ? `${identity}/` : identity;
    if (seen.has(key)) return;
    seen.add(key);
    entries.push({ identity, line, ...(directory ? { directory: true as const } : {}) });
  };
  for (const rule of rules) {
    if (rule.negated) continue;
    if (rule.kind === 'cloud') {
      if (lastCloudLineNegates.get(cloudKey(rule)) === false)
        add(rule.identity as string, rule.line, rule.directory === true);
      continue;
    }
    const thisLine = ignore();
    addPattern(thisLine, rule.pattern);
    const matched = folders.filter((folder) => matches(thisLine, folder));
    if (matched.length === 0) {
      warnings.push({
        line: rule.line,
        text: rule.text,
        message: `"${rule.text}" selects no skill in .atskills.`,
      });
    }
    for (const folder of matched) {
      if (!selected.has(folder)) continue;
      const identity = identityOfLocalFolder(folder);
      if (identity !== undefined) add(identity, rule.line);
    }
  }
  const excluded = [...lastCloudLineNegates].filter(([key, negates]) => negates && !key.endsWith('/'));
  return {
    entries,
    warnings: warnings.sort((a, b) => a.line - b.line),
    excluded: excluded.map(([key]) => key),
  };
}

/** A cloud line's identity, with `/` for a whole-directory line (a different line from the skill's). */
function cloudKey(rule: AutotriggerRule): string {
  return rule.directory ? `${rule.identity}/` : (rule.identity as string);
}

/**
 * The identity a skill folder under .atskills answers to: saved copies under `gh/` and `hub/` answer their
 * cloud identity (SPEC 1.3: "a saved copy answers its own address"); anything else is a bare project path.
 */
export function identityOfLocalFolder(folder: string): string | undefined {
  const path = trimSlashes(folder);
  for (const source of ['gh', 'hub'] as const) {
    if (path.startsWith(`${source}/`)) {
      try {
        return parseIdentity(`${source}:${encodePercent(path.slice(source.length + 1))}`).identity;
      } catch {
        break; // not a valid cloud address (e.g. 'gh/owner' alone): fall back to a bare path
      }
    }
  }
  try {
    return parseIdentity(encodePercent(path)).identity;
  } catch {
    return undefined;
  }
}

/**
 * Appends `line` unless an equivalent line (same text, or same cloud identity) is already there.
 * Throws ProtocolError 'bad-autotrigger-line' for text spanning several lines.
 */
export function addAutotriggerLine(content: string, line: string): string {
  const key = lineKey(singleLine(line));
  if (key === undefined) return content;
  if (content.split(/\r?\n/).some((existing) => lineKey(existing) === key)) return content;
  const eol = content.includes('\r\n') ? '\r\n' : '\n';
  const separator = content === '' || content.endsWith('\n') ? '' : eol;
  return `${content}${separator}${trimAutotriggerLine(line)}${eol}`;
}

/** Removes the lines equivalent to `line` (same text, or same cloud identity); other lines stay as they are. */
export function removeAutotriggerLine(content: string, line: string): string {
  const key = lineKey(singleLine(line));
  if (key === undefined) return content;
  const lines = content.split(/(?<=\n)/);
  const kept = lines.filter((existing) => lineKey(existing) !== key);
  return kept.length === lines.length ? content : kept.join('');
}

/**
 * A line as gitignore reads it: indentation dropped, and trailing blanks (spaces, tabs, a CR) too, except a
 * space escaped as `\ `, which ends the pattern with a space (a folder whose name ends in one).
 */
export function trimAutotriggerLine(raw: string): string {
  const text = raw.replace(/^\s+/u, '');
  // Scanned from the end, as git does: a regular expression anchored at the end retries every start.
  let end = text.length;
  while (end > 0 && ' \t\r\n'.includes(text[end - 1]!)) end--;
  if (end === text.length || text[end] !== ' ') return text.slice(0, end);
  let backslashes = 0;
  while (text[end - 1 - backslashes] === '\\') backslashes++;
  return backslashes % 2 === 1 ? `${text.slice(0, end)} ` : text.slice(0, end);
}

function singleLine(line: string): string {
  if (/[\r\n]/.test(line)) {
    throw new ProtocolError('bad-autotrigger-line', 'An .autotrigger entry must be a single line.');
  }
  return line;
}

/** `@hub:t/c`, `@gh:o/r/p`, a GitHub URL, or `@owner/name` (short for `@hub:owner/name`). */
function cloudIdentity(text: string): string {
  const hasPrefix = /^[^/:]*:/.test(text);
  return parseIdentity(hasPrefix ? text : formatIdentity('hub', text)).identity;
}

/** What makes two lines "the same line": trimmed text, or polarity plus canonical identity for cloud lines. */
function lineKey(line: string): string | undefined {
  const text = trimAutotriggerLine(line);
  if (text === '' || text.startsWith('#')) return undefined;
  const negated = text.startsWith('!');
  const pattern = negated ? text.slice(1) : text;
  if (pattern.startsWith('@')) {
    try {
      const directory = pattern.endsWith('/') ? '/' : '';
      return `${negated ? '!' : ''}@${cloudIdentity(pattern.slice(1))}${directory}`;
    } catch {
      return text;
    }
  }
  return text;
}

function addPattern(ig: Ignore, pattern: string): void {
  try {
    ig.add(pattern);
  } catch {
    // `ignore` rejects a few malformed patterns; such a line then selects nothing and is reported as such.
  }
}

function matches(ig: Ignore, folder: string): boolean {
  try {
    // The trailing slash tells `ignore` this is a directory, so `dir/` patterns apply.
    return ig.ignores(`${folder}/`);
  } catch {
    return false; // a folder name `ignore` refuses as a path (e.g. with '..') is never selected
  }
}

function trimSlashes(path: string): string {
  return trimEdgeSlashes(path);
}

/** Folder names are literal; parseIdentity percent-decodes, so a literal '%' must be escaped first. */
function encodePercent(path: string): string {
  return path.replace(/%/g, '%25');
}
