import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  type AutotriggerEntry,
  type AutotriggerWarning,
  addAutotriggerLine,
  expandAutotrigger,
  identityOfLocalFolder,
  parseAutotrigger,
  removeAutotriggerLine,
  trimAutotriggerLine,
} from '../autotrigger.js';
import { isProtocolError } from '../errors.js';
import { printableIdentity, refusingVerdict } from '../frame.js';
import { diskPath, type Identity, parseIdentity } from '../identity.js';
import { findSkillFolders } from '../leaf-rule.js';
import { type MenuItem, oneLine } from '../menu.js';
import { type ResidentEntry, renderResidentBlock } from '../resident-block.js';
import { withFileLock } from './file-lock.js';
import { isMissing, walkFolder } from './fs-tree.js';
import { checkLocalSkill, describeLocalProblem, type LocalSkillProblem } from './local-check.js';
import { resolveLocal } from './local-source.js';
import { isUnreachable } from './resolve-error.js';
import type { Resolved, Resolver } from './resolver.js';

/** `.atskills/.autotrigger` relative to the project root. */
export const AUTOTRIGGER_FILE = path.join('.atskills', '.autotrigger');

/** Options shared by install, triggers and the resident block. */
export interface ProjectOptions {
  projectDir: string;
  offline?: boolean;
  /** A hook's budget (ResolveOptions.deadline): cloud lines are resolved in parallel and served stale past it. */
  deadline?: number;
}

/**
 * The `.autotrigger` line that installs an identity: a cloud skill is `@<identity>`; a project path is
 * anchored with `/` when it has one segment (a gitignore pattern without a slash matches at any depth);
 * a folder of skills, cloud or local, gets a trailing `/` so the whole directory is taken.
 */
export function autotriggerLine(id: Identity, isFolderOfSkills = false): string {
  // A cloud folder of skills is a whole-directory line (SPEC 1.5): every skill of its menu, within K. Its
  // identity is read percent-decoded from a trimmed line: whitespace is written encoded (`%20`).
  if (id.source !== 'local')
    return `@${id.identity.replace(/\s/gu, encodeURIComponent)}${isFolderOfSkills ? '/' : ''}`;
  // gitignore drops a trailing space unless it is escaped as `\ `; a leading one survives only past the `/`.
  const escaped = id.path
    .replace(/[\\*?[\]]/g, (c) => `\\${c}`)
    .replace(/^([#!])/, '\\$1')
    .replace(/ $/, '\\ ');
  const anchored = escaped.includes('/') && !/^\s/u.test(escaped) ? escaped : `/${escaped}`;
  return isFolderOfSkills ? `${anchored}/` : anchored;
}

/** What install/uninstall did. */
export interface InstallOutcome {
  identity: string;
  line: string;
  changed: boolean;
  warning?: string;
  /** A folder: the skills the whole-directory line follows now. */
  skills?: string[];
  /** A project skill that breaks SPEC 1.1 (installed all the same; the resident block may leave it out). */
  problems?: LocalSkillProblem[];
  /** The skill's safety flag codes (SPEC 2.8); a folder's: every code its skills carry. */
  flags?: string[];
  /** A folder: the skills of it the hub flagged, each `<identity> (<codes>)`. */
  flaggedSkills?: string[];
  /**
   * Uninstall: the lines that still make the skill resident (a whole-directory line, a glob), and the line
   * that would leave it out (`!@hub:...`, `!path`); absent when no line selects it any more.
   */
  stillSelectedBy?: { line: number; text: string }[];
  exclusion?: string;
  /**
   * Why nothing was written: the hub judged it malicious, it is flagged and was not approved, its flags
   * could not be checked and `requireCheck` was set, or (under a deadline) `.autotrigger` stayed locked by
   * another editor past it (`warning` says by whom).
   */
  refused?: 'malicious' | 'flagged' | 'unchecked' | 'locked';
}

/** Options of `:install`: `approve` is asked before a flagged skill's line is written (SPEC 2.8). */
export interface InstallOptions extends ProjectOptions {
  /** Answers whether to install a skill the hub flagged; absent: a flagged skill is not installed. */
  approve?: (flags: readonly string[]) => boolean | Promise<boolean>;
  /** Write nothing when the source cannot be checked (a hook: the flags are unknown and nobody can be asked). */
  requireCheck?: boolean;
}

/**
 * `:install` (SPEC 1.5): appends the identity's line to `.atskills/.autotrigger` (idempotent). The identity
 * is resolved first so a typo is refused; if the source cannot be reached the line is still written.
 */
export async function installSkill(
  resolver: Resolver,
  identity: string | Identity,
  options: InstallOptions,
): Promise<InstallOutcome> {
  const id = typeof identity === 'string' ? parseIdentity(identity) : identity;
  let warning: string | undefined;
  // A folder written with its `/` stays a whole-directory line even when the source cannot be checked.
  let isMenu = typeof identity === 'string' && identity.endsWith('/');
  let skills: string[] | undefined;
  let problems: LocalSkillProblem[] | undefined;
  let flags: string[] = [];
  let flaggedSkills: string[] | undefined;
  try {
    const resolved = await resolver.resolve(id, options);
    isMenu = resolved.kind === 'menu';
    flags = resolved.flags;
    // A saved copy whose verdict is unknown is as unchecked as a stale cloud answer.
    const unchecked = resolved.stale
      ? resolved.staleReason
      : resolved.kind === 'skill'
        ? resolved.verdictUnchecked
        : undefined;
    if ((resolved.stale || unchecked) && options.requireCheck)
      return {
        identity: id.identity,
        line: autotriggerLine(id, isMenu),
        changed: false,
        refused: 'unchecked',
        ...(unchecked ? { warning: unchecked } : {}),
      };
    if (resolved.kind === 'skill' && resolved.verdictUnchecked)
      warning = `installed without the hub's verdict: ${resolved.verdictUnchecked}`;
    if (resolved.kind === 'menu') {
      skills =
        id.source === 'local'
          ? resolved.items.map((i) => i.identity)
          : (await directoryMembers(resolver, id.identity, options)).items.map((i) => i.identity);
      if (skills.length === 0)
        warning = `${id.identity} holds no skills yet; the line follows whatever appears there.`;
      // A whole-directory line makes each of its skills resident: their verdicts are the line's (SPEC 2.8).
      const cloudSkills = id.source === 'local' ? [] : skills;
      const verdicts = await resolver.hubFlags(cloudSkills, options);
      const flagged = cloudSkills.filter((skill) => (verdicts.get(skill) ?? []).length > 0);
      if (flagged.length > 0) {
        flags = [...new Set(flagged.flatMap((skill) => verdicts.get(skill) ?? []))].sort();
        flaggedSkills = flagged.map(
          (skill) => `${printableIdentity(skill)} (${verdicts.get(skill)?.join(', ')})`,
        );
      }
    }
    if (resolved.kind === 'skill' && resolved.problems) problems = resolved.problems;
    if (resolved.stale) warning = resolved.staleReason;
  } catch (error) {
    if (!isUnreachable(error)) throw error;
    if (options.requireCheck)
      return {
        identity: id.identity,
        line: autotriggerLine(id),
        changed: false,
        refused: 'unchecked',
        warning: (error as Error).message,
      };
    warning = `installed without checking: ${(error as Error).message}`;
  }
  const line = autotriggerLine(id, isMenu);
  // A resident skill reaches every later session: one the hub judged malicious never does, and a flagged one
  // only when the person says so.
  const refused = refusingVerdict(flags)
    ? ('malicious' as const)
    : flags.length > 0 && !(await options.approve?.(flags))
      ? ('flagged' as const)
      : undefined;
  if (refused)
    return {
      identity: id.identity,
      line,
      changed: false,
      flags,
      refused,
      ...(flaggedSkills ? { flaggedSkills } : {}),
    };
  let edited: { before: string; after: string };
  try {
    // A hook waits for the lock no longer than its budget (SPEC 2.5).
    edited = await editAutotrigger(
      options.projectDir,
      (content) => addAutotriggerLine(content, line),
      options.deadline !== undefined ? Math.max(0, options.deadline - Date.now()) : undefined,
    );
  } catch (error) {
    if (options.deadline === undefined || !isProtocolError(error) || error.code !== 'conflict') throw error;
    const holder = await lockHolder(options.projectDir);
    return {
      identity: id.identity,
      line,
      changed: false,
      refused: 'locked',
      warning: holder
        ? `.autotrigger is locked by ${holder}`
        : `.autotrigger could not be locked: ${(error as Error).message}`,
    };
  }
  const { before, after } = edited;
  return {
    identity: id.identity,
    line,
    changed: after !== before,
    ...(warning ? { warning } : {}),
    ...(skills ? { skills } : {}),
    ...(problems ? { problems } : {}),
    ...(flags.length ? { flags } : {}),
    ...(flaggedSkills ? { flaggedSkills } : {}),
  };
}

/** Removes exactly the line `install` writes for the identity (either form for a project folder). */
export async function uninstallSkill(
  identity: string | Identity,
  options: ProjectOptions,
): Promise<InstallOutcome> {
  const id = typeof identity === 'string' ? parseIdentity(identity) : identity;
  let line = autotriggerLine(id);
  const { before, after } = await editAutotrigger(options.projectDir, (content) => {
    let next = content;
    for (const candidate of [autotriggerLine(id), autotriggerLine(id, true)]) {
      const without = removeAutotriggerLine(next, candidate);
      if (without !== next) line = candidate;
      next = without;
    }
    return next;
  });
  // Uninstall removes exactly its own line (SPEC 1.5); another line selecting the skill is named, with the
  // exclusion that would drop it, instead of being edited behind the user's back.
  const selectedBy = await linesSelecting(id, after, options.projectDir);
  return {
    identity: id.identity,
    line,
    changed: after !== before,
    ...(selectedBy.length > 0 ? { stillSelectedBy: selectedBy, exclusion: `!${autotriggerLine(id)}` } : {}),
  };
}

/**
 * The `.autotrigger` lines that select `id` in `content`: its own line, a glob over project folders, or a
 * whole-directory cloud line above it (read without the network: a skill under the folder is taken to be
 * in its menu), unless a negating line has the last word on it.
 */
async function linesSelecting(
  id: Identity,
  content: string,
  projectDir: string,
): Promise<{ line: number; text: string }[]> {
  if (content === '') return [];
  const { entries, excluded } = expandAutotrigger(content, await projectSkillFolders(projectDir));
  if (excluded.includes(id.identity)) return [];
  return entries
    .filter((e) => (e.directory ? id.identity.startsWith(`${e.identity}/`) : e.identity === id.identity))
    .map((e) => ({ line: e.line, text: textOf(content, e.line) }));
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

/**
 * Each `.autotrigger` line, the skills it resolves to, and warnings for lines that resolve to nothing and for
 * project skills that break SPEC 1.1. With a resolver, whole-directory cloud lines are expanded through it
 * (one revision probe each); without one they list the folder itself.
 */
export async function listTriggers(options: ProjectOptions, resolver?: Resolver): Promise<TriggerReport> {
  const content = await readAutotrigger(options.projectDir);
  const { rules, warnings: parseWarnings } = parseAutotrigger(content);
  const { entries, warnings, excluded } = expandAutotrigger(
    content,
    await projectSkillFolders(options.projectDir),
  );
  const extra: AutotriggerWarning[] = [];
  const warnLine = (line: number, message: string) =>
    extra.push({ line, text: textOf(content, line), message });
  const selected = new Map<number, string[]>();
  const seen = new Set<string>();
  const select = (line: number, identity: string) => {
    if (seen.has(identity)) return;
    seen.add(identity);
    selected.set(line, [...(selected.get(line) ?? []), identity]);
  };
  // Every cloud skill line is resolved at once (one slow source costs one wait, not one per line).
  const cloudChecks = new Map<number, Promise<Resolved>>();
  for (const entry of entries) {
    if (entry.directory || !resolver || !/^(gh|hub):/.test(entry.identity)) continue;
    const checking = resolver.resolve(entry.identity, {
      projectDir: options.projectDir,
      offline: options.offline ?? false,
    });
    checking.catch(() => {}); // awaited in line order below
    cloudChecks.set(entry.line, checking);
  }
  for (const entry of entries) {
    if (entry.directory && resolver) {
      try {
        const members = (await directoryMembers(resolver, entry.identity, options)).items.map(
          (i) => i.identity,
        );
        for (const m of members) if (!excluded.includes(m)) select(entry.line, m);
        if (members.length === 0) warnLine(entry.line, `${entry.identity}/ holds no skills.`);
      } catch (error) {
        if (!isProtocolError(error)) throw error;
        warnLine(entry.line, (error as Error).message);
      }
      continue;
    }
    select(entry.line, entry.directory ? `${entry.identity}/` : entry.identity);
    // What the resident block will say of this line, said here too: a cloud folder named without its slash
    // renders nothing, and a line that cannot be resolved renders nothing either.
    const checking = cloudChecks.get(entry.line);
    if (checking) {
      try {
        const resolved = await checking;
        if (resolved.kind === 'menu') warnLine(entry.line, folderWithoutSlash(entry.identity));
      } catch (error) {
        if (!isProtocolError(error)) throw error;
        warnLine(entry.line, (error as Error).message);
      }
    }
    for (const p of await localProblems(options.projectDir, entry.identity))
      warnLine(entry.line, describeLocalProblem(p));
  }
  const lines = rules.map((rule) => ({
    line: rule.line,
    text: rule.text,
    kind: rule.kind,
    negated: rule.negated,
    identities: selected.get(rule.line) ?? [],
  }));
  return {
    file: path.join(options.projectDir, AUTOTRIGGER_FILE),
    lines,
    warnings: mergeWarnings(parseWarnings, warnings, extra).sort((a, b) => a.line - b.line),
  };
}

/** The warning of a cloud line naming a folder of skills without its slash (it renders nothing). */
function folderWithoutSlash(identity: string): string {
  return `${identity} is a folder of skills: write "@${identity}/" (with the slash) to follow every skill in it.`;
}

/** The resident block (SPEC 1.5): the exact string a host splices into its system prompt, and its cost. */
export interface ResidentReport {
  block: string;
  /** The block's token count (o200k_base); absent when `countTokens: false` (hooks never show it). */
  tokens?: number;
  entries: (ResidentEntry & { stale: boolean })[];
  warnings: AutotriggerWarning[];
}

/**
 * Resolves every `.autotrigger` entry local first (cloud ones then through the cache) and renders the block.
 * A whole-directory line adds every skill of its menu at its place; a skill appears once (first line wins).
 * A project skill whose frontmatter is unusable (does not parse, no name, no description) is left out with
 * a warning naming the file and the rule; other rule breaks are warned about and the row stays.
 */
export async function residentBlock(
  resolver: Resolver,
  options: ProjectOptions & { countTokens?: boolean },
): Promise<ResidentReport> {
  const content = await readAutotrigger(options.projectDir);
  const localFolders = await projectSkillFolders(options.projectDir);
  const { entries, warnings, excluded } = expandAutotrigger(content, localFolders);
  if (!options.offline) {
    // Hub lines are asked in one batch, with the verdicts on the saved copies among them and under their
    // folders, so a hub that does not answer costs one wait, not one per line; under a budget every line is
    // also resolved at once. The loop below then reads the memoized answers in order.
    const batch = resolver.probeBatch(
      [
        ...entries.map((e) => e.identity),
        ...savedUnder(
          entries.filter((e) => e.directory),
          localFolders,
        ),
      ],
      {
        projectDir: options.projectDir,
        ...(options.deadline !== undefined ? { deadline: options.deadline } : {}),
      },
    );
    if (options.deadline === undefined) await batch;
    else
      await Promise.allSettled([
        batch,
        ...entries.map((e) =>
          e.directory
            ? directoryMembers(resolver, e.identity, options)
            : resolver.resolve(e.identity, options),
        ),
      ]);
  }
  const extra: AutotriggerWarning[] = [];
  const rows: ResidentReport['entries'] = [];
  const seen = new Set<string>();
  const warn = (line: number, message: string) => extra.push({ line, text: textOf(content, line), message });
  const addRow = (line: number, row: ResidentReport['entries'][number], problems: LocalSkillProblem[]) => {
    if (seen.has(row.identity)) return;
    seen.add(row.identity);
    for (const p of problems) warn(line, describeLocalProblem(p));
    if (problems.some((p) => p.unusable) || row.description === '') {
      warn(
        line,
        `${printableIdentity(row.identity)} is left out of the resident block: it has no usable name and description.`,
      );
      return;
    }
    rows.push(row);
  };
  for (const entry of entries) {
    try {
      if (entry.directory) {
        const members = await directoryMembers(resolver, entry.identity, options);
        if (members.stale) warn(entry.line, `${entry.identity}/: ${members.staleReason}`);
        if (members.items.length === 0) warn(entry.line, `${entry.identity}/ holds no skills.`);
        // A menu names no verdicts: the hub is asked for its skills' own, as for a line of each.
        const verdicts = options.offline
          ? new Map<string, string[]>()
          : await resolver.hubFlags(
              members.items.filter((item) => !item.local && !seen.has(item.identity)).map((i) => i.identity),
              options,
            );
        for (const item of members.items) {
          if (excluded.includes(item.identity) || seen.has(item.identity)) continue;
          // A saved copy carries the hub's verdict on the revision it was saved at (SPEC 2.8).
          const saved = item.local ? await resolver.savedFlags(item.identity, options) : undefined;
          const flags = saved ? saved.flags : (verdicts.get(item.identity) ?? []);
          if (saved?.unchecked) warn(entry.line, `${printableIdentity(item.identity)}: ${saved.unchecked}.`);
          const verdict = refusingVerdict(flags);
          if (verdict) {
            seen.add(item.identity);
            warn(
              entry.line,
              // A menu's identities are a repository's folder names: printed outside any frame, they are encoded.
              `${printableIdentity(item.identity)} is left out: the hub judged it malicious (${verdict}).`,
            );
            continue;
          }
          const problems = item.local ? await localProblems(options.projectDir, item.identity) : [];
          addRow(
            entry.line,
            {
              name: item.name ?? item.identity.split('/').at(-1) ?? item.identity,
              description: oneLine(item.description),
              identity: item.identity,
              stale: members.stale,
              ...(flags.length ? { flags } : {}),
            },
            problems,
          );
        }
        continue;
      }
      const resolved = await resolver.resolve(entry.identity, options);
      if (resolved.stale) warn(entry.line, `${entry.identity}: ${resolved.staleReason}`);
      if (resolved.kind === 'skill' && resolved.verdictUnchecked)
        warn(entry.line, `${entry.identity}: ${resolved.verdictUnchecked}.`);
      if (resolved.kind === 'skill') {
        const verdict = refusingVerdict(resolved.flags);
        if (verdict) {
          seen.add(resolved.identity);
          warn(entry.line, `${resolved.identity} is left out: the hub judged it malicious (${verdict}).`);
          continue;
        }
        addRow(
          entry.line,
          {
            name: resolved.name,
            description: oneLine(resolved.description),
            identity: resolved.identity,
            stale: resolved.stale,
            ...(resolved.flags.length ? { flags: resolved.flags } : {}),
          },
          resolved.problems ?? [],
        );
        continue;
      }
      warn(entry.line, folderWithoutSlash(entry.identity));
    } catch (error) {
      if (!isProtocolError(error)) throw error;
      warn(entry.line, (error as Error).message);
    }
  }
  const block = renderResidentBlock(rows);
  // Loaded here, not at the top, and only when the count is shown: the tokenizer's tables cost ~0.7 s of CPU.
  const tokens =
    options.countTokens === false ? undefined : (await import('../tokens.js')).countTokens(block);
  return {
    block,
    ...(tokens !== undefined ? { tokens } : {}),
    entries: rows,
    warnings: mergeWarnings(warnings, extra).sort((a, b) => a.line - b.line),
  };
}

/** The skills a whole-directory line follows, and how fresh the cloud's answer was. */
export interface DirectoryMembers {
  items: (MenuItem & { local: boolean })[];
  stale: boolean;
  staleReason?: string;
}

/**
 * Every skill of a folder for a whole-directory line: the cloud's menu (one probe, K enforced) joined with
 * what the project saved under the folder, each skill answered local first. A project copy of one skill
 * must not hide the rest of the folder, so the folder's own local answer is not the whole answer here.
 * When the cloud cannot answer, the saved skills alone are served (marked stale).
 */
export async function directoryMembers(
  resolver: Resolver,
  identity: string,
  options: ProjectOptions,
): Promise<DirectoryMembers> {
  const id = parseIdentity(identity);
  const local = await resolveLocal(id, options.projectDir);
  if (local?.kind === 'skill') {
    const own = await resolver.resolve(id, options);
    const description = own.kind === 'skill' ? own.description : '';
    const name = own.kind === 'skill' ? own.name : undefined;
    return {
      items: [{ identity: id.identity, ...(name ? { name } : {}), description, local: true }],
      stale: false,
    };
  }
  const localItems = local?.kind === 'menu' ? local.items : [];
  let cloud: Resolved | undefined;
  let staleReason: string | undefined;
  try {
    cloud = await resolver.resolve(id, { ...options, skipLocal: true });
  } catch (error) {
    if (!isUnreachable(error) || localItems.length === 0) throw error;
    staleReason = `${(error as Error).message} Only the skills saved under .atskills/ are served.`;
  }
  const byIdentity = new Map<string, MenuItem & { local: boolean }>();
  const cloudItems =
    cloud?.kind === 'menu'
      ? cloud.items
      : cloud
        ? [{ identity: cloud.identity, name: cloud.name, description: cloud.description }]
        : [];
  for (const item of cloudItems) byIdentity.set(item.identity, { ...item, local: false });
  for (const item of localItems) byIdentity.set(item.identity, { ...item, local: true });
  const items = [...byIdentity.values()].sort((a, b) =>
    a.identity < b.identity ? -1 : a.identity > b.identity ? 1 : 0,
  );
  const stale = staleReason !== undefined || cloud?.stale === true;
  const reason = staleReason ?? cloud?.staleReason;
  return { items, stale, ...(stale && reason ? { staleReason: reason } : {}) };
}

/** The SPEC 1.1 problems of the project's own copy of an identity ([] when there is none or it is valid). */
async function localProblems(projectDir: string, identity: string): Promise<LocalSkillProblem[]> {
  const dir = path.join(projectDir, diskPath(parseIdentity(identity)));
  try {
    return await checkLocalSkill(dir, projectDir);
  } catch (error) {
    if (isMissing(error) || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw error;
  }
}

function textOf(content: string, line: number): string {
  return trimAutotriggerLine(content.split(/\r?\n/)[line - 1] ?? '');
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

/**
 * Edits `.atskills/.autotrigger` under its lock (`.autotrigger.lock`): install and uninstall run from the
 * CLI and from hooks at once, and a read-modify-write without turns loses the lines of the others. The new
 * content is written to a temporary file and renamed in, so a reader never sees half of it. `waitMs` bounds
 * the wait for another holder (the lock's default otherwise).
 */
async function editAutotrigger(
  projectDir: string,
  edit: (content: string) => string,
  waitMs?: number,
): Promise<{ before: string; after: string }> {
  const file = path.join(projectDir, AUTOTRIGGER_FILE);
  await mkdir(path.dirname(file), { recursive: true });
  const locked = async () => {
    const before = await readAutotrigger(projectDir);
    const after = edit(before);
    if (after !== before) {
      const temp = `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
      await writeFile(temp, after);
      await renameOver(temp, file);
    }
    return { before, after };
  };
  return withFileLock(`${file}.lock`, locked, waitMs !== undefined ? { waitMs } : {});
}

/**
 * Who holds `.autotrigger`'s lock, as its file names them (`process <pid> on <host> (<lock file>)`), for a
 * note; undefined when it names nobody (released meanwhile, unreadable, not written yet).
 */
async function lockHolder(projectDir: string): Promise<string | undefined> {
  const lock = `${path.join(projectDir, AUTOTRIGGER_FILE)}.lock`;
  try {
    const [pid, host] = (await readFile(lock, 'utf8')).trim().split(' ');
    if (pid && /^\d+$/.test(pid)) return `process ${pid}${host ? ` on ${host}` : ''} (${lock})`;
  } catch {
    // No holder to name: the error's own message is given instead.
  }
  return undefined;
}

/** rename(2), retried a few times on Windows, where a reader holding the target open makes it fail briefly. */
async function renameOver(from: string, to: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await rename(from, to);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (attempt >= 5 || (code !== 'EPERM' && code !== 'EACCES' && code !== 'EBUSY')) {
        await rm(from, { force: true });
        throw error;
      }
      await new Promise((r) => setTimeout(r, 20 * (attempt + 1)));
    }
  }
}

/** The identities of the project's skill folders (relative to .atskills) under whole-directory cloud lines. */
function savedUnder(directories: readonly AutotriggerEntry[], localFolders: readonly string[]): string[] {
  const prefixes = directories.map(
    (e) => `${diskPath(parseIdentity(e.identity)).slice('.atskills/'.length)}/`,
  );
  return localFolders
    .filter((folder) => prefixes.some((prefix) => folder.startsWith(prefix)))
    .flatMap((folder) => identityOfLocalFolder(folder) ?? []);
}

/** Skill folders under `.atskills`, relative to it (e.g. 'team/a', 'gh/o/r/p'). */
async function projectSkillFolders(projectDir: string): Promise<string[]> {
  return findSkillFolders(await walkFolder(path.join(projectDir, '.atskills')));
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
