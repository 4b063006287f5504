import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  type AutotriggerWarning,
  addAutotriggerLine,
  expandAutotrigger,
  parseAutotrigger,
  removeAutotriggerLine,
} from '../autotrigger.js';
import { isProtocolError } from '../errors.js';
import { type Identity, parseIdentity } from '../identity.js';
import { findSkillFolders } from '../leaf-rule.js';
import { type ResidentEntry, renderResidentBlock } from '../resident-block.js';
import { isMissing, walkFolder } from './fs-tree.js';
import { isUnreachable } from './resolve-error.js';
import type { Resolver } from './resolver.js';

/** `.atskills/.autotrigger` relative to the project root. */
export const AUTOTRIGGER_FILE = path.join('.atskills', '.autotrigger');

/** Options shared by install, triggers and the resident block. */
export interface ProjectOptions {
  projectDir: string;
  offline?: boolean;
}

/**
 * The `.autotrigger` line that installs an identity: a cloud skill is `@<identity>`; a project path is
 * anchored with `/` when it has one segment (a gitignore pattern without a slash matches at any depth),
 * and a folder of skills gets a trailing `/` so the whole directory is taken.
 */
export function autotriggerLine(id: Identity, isFolderOfSkills = false): string {
  if (id.source !== 'local') return `@${id.identity}`;
  const escaped = id.path.replace(/[\\*?[\]]/g, (c) => `\\${c}`).replace(/^([#!])/, '\\$1');
  const anchored = escaped.includes('/') ? escaped : `/${escaped}`;
  return isFolderOfSkills ? `${anchored}/` : anchored;
}

/** What install/uninstall did. */
export interface InstallOutcome {
  identity: string;
  line: string;
  changed: boolean;
  warning?: string;
}

/**
 * `:install` (SPEC 1.5): appends the identity's line to `.atskills/.autotrigger` (idempotent). The identity
 * is resolved first so a typo is refused; if the source cannot be reached the line is still written.
 */
export async function installSkill(
  resolver: Resolver,
  identity: string | Identity,
  options: ProjectOptions,
): Promise<InstallOutcome> {
  const id = typeof identity === 'string' ? parseIdentity(identity) : identity;
  let warning: string | undefined;
  let isMenu = false;
  try {
    const resolved = await resolver.resolve(id, options);
    isMenu = resolved.kind === 'menu';
    if (resolved.stale) warning = resolved.staleReason;
  } catch (error) {
    if (!isUnreachable(error)) throw error;
    warning = `installed without checking: ${(error as Error).message}`;
  }
  const line = autotriggerLine(id, isMenu);
  const before = await readAutotrigger(options.projectDir);
  const after = addAutotriggerLine(before, line);
  if (after !== before) await writeAutotrigger(options.projectDir, after);
  return { identity: id.identity, line, changed: after !== before, ...(warning ? { warning } : {}) };
}

/** Removes exactly the line `install` writes for the identity (either form for a project folder). */
export async function uninstallSkill(
  identity: string | Identity,
  options: ProjectOptions,
): Promise<InstallOutcome> {
  const id = typeof identity === 'string' ? parseIdentity(identity) : identity;
  const before = await readAutotrigger(options.projectDir);
  let after = before;
  let line = autotriggerLine(id);
  for (const candidate of [autotriggerLine(id), autotriggerLine(id, true)]) {
    const next = removeAutotriggerLine(after, candidate);
    if (next !== after) line = candidate;
    after = next;
  }
  if (after !== before) await writeAutotrigger(options.projectDir, after);
  return { identity: id.identity, line, changed: after !== before };
}

/** One `.autotrigger` line and what it selects. */
export interface TriggerLine {
  line: number;
  text: string;
  kind: 'local' | 'cloud';
  negated: boolean;
  /** The skills this line adds to the resident block (after dedupe and negation). */
  identities: string[];
}

/** What `atskills triggers` shows. */
export interface TriggerReport {
  file: string;
  lines: TriggerLine[];
  warnings: AutotriggerWarning[];
}

/** Each `.autotrigger` line, the skills it resolves to, and warnings for lines that resolve to nothing. */
export async function listTriggers(options: ProjectOptions): Promise<TriggerReport> {
  const content = await readAutotrigger(options.projectDir);
  const { rules, warnings: parseWarnings } = parseAutotrigger(content);
  const { entries, warnings } = expandAutotrigger(content, await projectSkillFolders(options.projectDir));
  const lines = rules.map((rule) => ({
    line: rule.line,
    text: rule.text,
    kind: rule.kind,
    negated: rule.negated,
    identities: entries.filter((e) => e.line === rule.line).map((e) => e.identity),
  }));
  return {
    file: path.join(options.projectDir, AUTOTRIGGER_FILE),
    lines,
    warnings: mergeWarnings(parseWarnings, warnings),
  };
}

/** The resident block (SPEC 1.5): the exact string a host splices into its system prompt, and its cost. */
export interface ResidentReport {
  block: string;
  tokens: number;
  entries: (ResidentEntry & { stale: boolean })[];
  warnings: AutotriggerWarning[];
}

/** Resolves every `.autotrigger` entry local first (cloud ones then through the cache) and renders the block. */
export async function residentBlock(resolver: Resolver, options: ProjectOptions): Promise<ResidentReport> {
  const content = await readAutotrigger(options.projectDir);
  const { entries, warnings } = expandAutotrigger(content, await projectSkillFolders(options.projectDir));
  const extra: AutotriggerWarning[] = [];
  const rows: ResidentReport['entries'] = [];
  const text = (line: number) => content.split(/\r?\n/)[line - 1] ?? '';
  for (const entry of entries) {
    try {
      const resolved = await resolver.resolve(entry.identity, options);
      if (resolved.kind !== 'skill') {
        extra.push({
          line: entry.line,
          text: text(entry.line),
          message: `${entry.identity} is a menu, not a skill; install its skills one by one.`,
        });
        continue;
      }
      if (resolved.stale)
        extra.push({
          line: entry.line,
          text: text(entry.line),
          message: `${entry.identity}: ${resolved.staleReason}`,
        });
      rows.push({
        name: resolved.name,
        description: oneLine(resolved.description),
        identity: resolved.identity,
        stale: resolved.stale,
      });
    } catch (error) {
      if (!isProtocolError(error)) throw error;
      extra.push({ line: entry.line, text: text(entry.line), message: (error as Error).message });
    }
  }
  const block = renderResidentBlock(rows);
  // Loaded here, not at the top: the tokenizer's tables would otherwise slow every command's start-up.
  const { countTokens } = await import('../tokens.js');
  return { block, tokens: countTokens(block), entries: rows, warnings: mergeWarnings(warnings, extra) };
}

/** Reads `.atskills/.autotrigger` ('' when there is none). */
export async function readAutotrigger(projectDir: string): Promise<string> {
  try {
    return await readFile(path.join(projectDir, AUTOTRIGGER_FILE), 'utf8');
  } catch (error) {
    if (isMissing(error)) return '';
    throw error;
  }
}

async function writeAutotrigger(projectDir: string, content: string): Promise<void> {
  const file = path.join(projectDir, AUTOTRIGGER_FILE);
  await mkdir(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, content);
  await rename(temp, file);
}

/** Skill folders under `.atskills`, relative to it (e.g. 'team/a', 'gh/o/r/p'). */
async function projectSkillFolders(projectDir: string): Promise<string[]> {
  return findSkillFolders(await walkFolder(path.join(projectDir, '.atskills')));
}

/** Descriptions may be multi-line YAML; a resident row must stay one line. */
function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}

function mergeWarnings(...lists: AutotriggerWarning[][]): AutotriggerWarning[] {
  const seen = new Set<string>();
  return lists.flat().filter((w) => {
    const key = `${w.line}\0${w.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
