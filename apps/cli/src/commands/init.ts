import { createHash } from 'node:crypto';
import { mkdir, readFile, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type Command, Option } from 'commander';
import type { CliContext } from '../context.js';

/** The hosts `init` knows how to wire. */
const AGENTS = ['claude-code', 'cursor', 'codex', 'generic'] as const;
type Agent = (typeof AGENTS)[number];

/** What `init` wrote, so `init --remove` undoes exactly that (`.atskills/.init.json`). */
interface InitRecord {
  version: 1;
  agent: Agent;
  /** Files init created (project-relative); removed again only while they hold what init wrote. */
  created: Record<string, string>;
  /** Folders init created, deepest last; removed when empty. */
  createdDirs: string[];
  /** Instruction files that existed: the pointer line added and whether a newline was added before it. */
  pointers: Record<string, { line: string; separator: boolean }>;
  /** `.claude/settings.json` when it existed: the original bytes (base64) to restore (older records). */
  settingsOriginal?: string;
  /** Each hooks file init edited that existed before: its original bytes (base64), restored by --remove. */
  originals?: Record<string, string>;
  /** Whether the user-prompt hook appends the hub's suggestions (`--suggest` on its command line). */
  suggest?: boolean;
}

const RECORD_FILE = '.atskills/.init.json';
const MARKER = '<!-- atskills:init -->';
const HOOK_COMMAND = 'atskills hook';
const SETTINGS_FILE = '.claude/settings.json';

/**
 * Where and how each host reads its hooks, from the hosts' own documentation:
 * - Claude Code (https://docs.anthropic.com/en/docs/claude-code/hooks): `.claude/settings.json`,
 *   `hooks.<Event>` = [{ matcher?, hooks: [{ type: "command", command, timeout (s) }] }].
 * - Codex (https://developers.openai.com/codex/hooks): `<repo>/.codex/hooks.json`, the same event -> matcher
 *   group -> handler layout; project hooks run only once the project is trusted and the hooks reviewed.
 * - Cursor (https://cursor.com/docs/agent/hooks): `.cursor/hooks.json`, `{ version: 1, hooks: { <event>:
 *   [{ command }] } }`, events `sessionStart` and `beforeSubmitPrompt`.
 * Each hook command passes nothing of the message on its command line: the host writes the event to stdin.
 */
interface HostHooks {
  file: string;
  /** The entries init adds, by the host's event name. */
  entries: Record<string, unknown[]>;
  /** Whether an entry of an event's list is one of ours. */
  isOurs: (entry: unknown) => boolean;
  /** Keys the file needs at its top besides `hooks` (Cursor's `version`). */
  top?: Record<string, unknown>;
}

function commandIsOurs(command: unknown): boolean {
  return typeof command === 'string' && command.startsWith(`${HOOK_COMMAND} `);
}

/** A Claude Code / Codex matcher group holding only our command. */
function groupOf(command: string): unknown {
  return { hooks: [{ type: 'command', command, timeout: 10 }] };
}

/**
 * The hook files and entries of a host with hooks; undefined for `generic`. With `suggest`, the user-prompt
 * hook carries `--suggest`: the choice lives where the hook reads it, in the host's own file.
 */
function hostHooks(agent: Agent, suggest = false): HostHooks | undefined {
  const cmd = (event: string) =>
    `${HOOK_COMMAND} ${event} --host ${agent}${suggest && event === 'user-prompt' ? ' --suggest' : ''}`;
  if (agent === 'cursor')
    return {
      file: '.cursor/hooks.json',
      entries: {
        sessionStart: [{ command: cmd('session-start') }],
        beforeSubmitPrompt: [{ command: cmd('user-prompt') }],
      },
      isOurs: (entry) => commandIsOurs((entry as { command?: unknown }).command),
      top: { version: 1 },
    };
  if (agent === 'claude-code' || agent === 'codex')
    return {
      file: agent === 'codex' ? '.codex/hooks.json' : SETTINGS_FILE,
      entries: {
        SessionStart: [groupOf(cmd('session-start'))],
        UserPromptSubmit: [groupOf(cmd('user-prompt'))],
      },
      isOurs: isOurGroup,
    };
  return undefined;
}

/** What each host still asks of the user after init. */
function hostAdvice(agent: Agent): string[] {
  if (agent === 'claude-code')
    return [
      'Claude Code now adds the resident block at session start and resolves @skills: references in each prompt.',
      'Claude Code reads .claude/settings.json when a session starts: start a new session (or review the hooks with /hooks).',
    ];
  if (agent === 'codex')
    return [
      'Codex runs these hooks (.codex/hooks.json) only when you have done three things:',
      '  1. enable hooks in ~/.codex/config.toml:  [features] codex_hooks = true',
      '  2. trust this project (Codex asks when it first opens it),',
      '  3. review and trust the two hooks in Codex (it lists new project hooks for review).',
    ];
  if (agent === 'cursor')
    return [
      'Cursor runs .cursor/hooks.json for this workspace: restart Cursor (or reload the window) so it reads the file; Settings -> Hooks lists them.',
    ];
  return [
    'This host has no hooks: the pointer line tells the agent to pipe each message to `atskills expand -`.',
  ];
}

const README = `# .atskills

Agent skills of this project (the @skills protocol). A folder holding a SKILL.md is a skill;
\`@skills:<path>\` in a message loads \`.atskills/<path>\` first. \`.autotrigger\` lists the skills whose
name and description stay resident in every session (one line each; .gitignore syntax).
Saved cloud skills live under \`gh/\` and \`hub/\` with a two-line \`.source\` stamp.
Run \`atskills --help\`, or read SKILLS.md.
`;

/** The instruction file that carries the pointer line, per host. */
function instructionFile(agent: Agent): string {
  if (agent === 'claude-code') return 'CLAUDE.md';
  if (agent === 'cursor') return '.cursor/rules/atskills.mdc';
  return 'AGENTS.md';
}

/**
 * The one line that tells an agent how to treat `@skills:` references. With a prompt hook (`hooked`) it
 * applies only when the hook's frames are missing: a host may drop what a hook adds before a prompt (Cursor
 * builds whose beforeSubmitPrompt takes only `continue` and `user_message`), and then the agent expands.
 */
function pointerLine(hub: string, hasCopy: boolean, hooked: boolean): string {
  const doc = hasCopy ? `.atskills/SKILLS.md (from ${hub}/SKILLS.md)` : `${hub}/SKILLS.md`;
  const when = hooked
    ? 'When a message holds `@skills:` references and your context has no `<skill-text-…>` frame or atskills line for them (the prompt hook adds these; a host may drop them),'
    : 'When a message holds `@skills:` references,';
  // The message goes on stdin (a quoted here-document or a pipe): quotes, backticks and $(...) stay text.
  return `${when} pass the message on stdin, never on the command line (\`atskills expand - <<'ATSKILLS_MESSAGE'\`, the message, then a line \`ATSKILLS_MESSAGE\`; or pipe it to \`atskills expand -\`) and follow what it prints, or follow ${doc}. ${MARKER}`;
}

/** A Cursor rule file: the pointer line under frontmatter that applies it to every request. */
function cursorRule(line: string): string {
  return `---\ndescription: How to load @skills: references\nalwaysApply: true\n---\n${line}\n`;
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

function sha(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

async function readText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Guesses the host from what the project already has: .claude / CLAUDE.md, .cursor, AGENTS.md. */
async function detectAgent(root: string): Promise<Agent> {
  const has = async (p: string) => (await readText(path.join(root, p)).catch(() => '')) !== undefined;
  const isDir = async (p: string) =>
    (await stat(path.join(root, p)).catch(() => undefined))?.isDirectory() ?? false;
  if ((await isDir('.claude')) || (await has('CLAUDE.md'))) return 'claude-code';
  if (await isDir('.cursor')) return 'cursor';
  if (await has('AGENTS.md')) return 'codex';
  return 'generic';
}

type Json = Record<string, unknown>;

function isOurGroup(group: unknown): boolean {
  const hooks = (group as { hooks?: unknown }).hooks;
  return (
    Array.isArray(hooks) &&
    hooks.length > 0 &&
    hooks.every((h) => commandIsOurs((h as { command?: unknown }).command))
  );
}

/**
 * The file's JSON with our entries added to each event (once; an earlier one of ours is replaced in place,
 * so that a new choice, e.g. suggestions, takes effect); every other key and entry kept.
 */
function withOurHooks(settings: Json, host: HostHooks): Json {
  const hooks = { ...((settings.hooks as Json | undefined) ?? {}) };
  for (const [event, entries] of Object.entries(host.entries)) {
    const existing = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];
    const at = existing.findIndex(host.isOurs);
    hooks[event] =
      at < 0
        ? [...existing, ...entries]
        : [...existing.slice(0, at), ...entries, ...existing.slice(at + 1).filter((e) => !host.isOurs(e))];
  }
  return { ...(host.top ?? {}), ...settings, hooks };
}

/** The file's JSON without our entries; events and `hooks` left empty by that are dropped. */
function withoutOurHooks(settings: Json, host: HostHooks): Json {
  if (!settings.hooks || typeof settings.hooks !== 'object') return settings;
  const hooks: Json = {};
  for (const [event, groups] of Object.entries(settings.hooks as Json)) {
    if (!Array.isArray(groups)) {
      hooks[event] = groups;
      continue;
    }
    const kept = groups.filter((g) => !host.isOurs(g));
    if (kept.length > 0) hooks[event] = kept;
  }
  const { hooks: _dropped, ...rest } = settings;
  return Object.keys(hooks).length > 0 ? { ...rest, hooks } : rest;
}

/** JSON as a person would format it: two-space indent and a final newline. */
function formatJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** Fetches the hub's SKILLS.md (short timeout: init must not hang on a hub that is away). */
async function fetchSkillsMd(hub: string): Promise<string | undefined> {
  try {
    const response = await fetch(`${hub}/SKILLS.md`, { signal: AbortSignal.timeout(3_000) });
    if (!response.ok) return undefined;
    const text = await response.text();
    return text.startsWith('# @skills') ? text : undefined;
  } catch {
    return undefined;
  }
}

/** Sets a project up for a host, or (`remove`) undoes exactly what it set up. */
class ProjectInit {
  readonly changes: string[] = [];

  constructor(
    readonly root: string,
    readonly record: InitRecord,
  ) {}

  private abs(rel: string): string {
    return path.join(this.root, rel);
  }

  /** Creates the folder (and parents) of `rel`, recording each one it made. */
  private async ensureDir(relDir: string): Promise<void> {
    const missing: string[] = [];
    for (let dir = relDir; dir !== '.' && dir !== ''; dir = path.dirname(dir)) {
      if (await exists(this.abs(dir))) break;
      missing.unshift(dir);
    }
    for (const dir of missing) {
      await mkdir(this.abs(dir));
      if (!this.record.createdDirs.includes(dir)) this.record.createdDirs.push(dir);
    }
  }

  /** Writes a file init owns when it is missing (an existing file, the user's or ours, is left alone). */
  async createFile(rel: string, content: string): Promise<void> {
    if ((await readText(this.abs(rel))) !== undefined) return;
    await this.ensureDir(path.dirname(rel));
    await writeFile(this.abs(rel), content);
    this.record.created[rel] = sha(content);
    this.changes.push(`created ${rel}`);
  }

  /** Adds (or updates) the marked pointer line of an instruction file, never touching any other line. */
  async setPointer(rel: string, line: string, agent: Agent): Promise<void> {
    const file = this.abs(rel);
    const text = await readText(file);
    if (text === undefined) {
      const content = agent === 'cursor' ? cursorRule(line) : `${line}\n`;
      await this.ensureDir(path.dirname(rel));
      await writeFile(file, content);
      this.record.created[rel] = sha(content);
      this.changes.push(`created ${rel} with the @skills pointer line`);
      return;
    }
    const lines = text.split('\n');
    const at = lines.findIndex((l) => l.includes(MARKER));
    if (at >= 0) {
      if (lines[at] === line) return;
      lines[at] = line;
      await writeFile(file, lines.join('\n'));
      if (this.record.created[rel]) this.record.created[rel] = sha(lines.join('\n'));
      else if (this.record.pointers[rel]) this.record.pointers[rel].line = line;
      this.changes.push(`updated the @skills pointer line in ${rel}`);
      return;
    }
    const separator = text !== '' && !text.endsWith('\n');
    await writeFile(file, `${text}${separator ? '\n' : ''}${line}\n`);
    this.record.pointers[rel] = { line, separator };
    this.changes.push(`added one @skills pointer line at the end of ${rel}`);
  }

  /** Adds the host's two hooks to its hooks file (keeping every other hook and setting). */
  async setHooks(host: HostHooks): Promise<void> {
    const rel = host.file;
    const file = this.abs(rel);
    const events = Object.keys(host.entries).join(' and ');
    const text = await readText(file);
    if (text === undefined) {
      const content = formatJson(withOurHooks({}, host));
      await this.ensureDir(path.dirname(rel));
      await writeFile(file, content);
      this.record.created[rel] = sha(content);
      this.changes.push(`created ${rel} with ${events} hooks`);
      return;
    }
    const settings = hooksJson(rel, text);
    const updated = withOurHooks(settings, host);
    if (JSON.stringify(updated) === JSON.stringify(settings)) return;
    this.record.originals ??= {};
    if (!this.record.created[rel] && this.record.originals[rel] === undefined)
      this.record.originals[rel] = Buffer.from(text).toString('base64');
    const content = formatJson(updated);
    await writeFile(file, content);
    // A file init created and nobody else changed stays init's: --remove still deletes it.
    if (this.record.created[rel] === sha(text)) this.record.created[rel] = sha(content);
    this.changes.push(
      text.includes(HOOK_COMMAND)
        ? `updated the ${events} hooks in ${rel}`
        : `added ${events} hooks to ${rel}`,
    );
  }

  /** The original bytes of an edited hooks file, when init recorded them. */
  private original(rel: string): string | undefined {
    const b64 =
      this.record.originals?.[rel] ?? (rel === SETTINGS_FILE ? this.record.settingsOriginal : undefined);
    return b64 === undefined ? undefined : Buffer.from(b64, 'base64').toString('utf8');
  }

  /** Undoes everything the record lists, keeping whatever the user changed since. */
  async remove(): Promise<void> {
    for (const agent of AGENTS) {
      const host = hostHooks(agent);
      if (!host || this.record.created[host.file]) continue;
      const rel = host.file;
      const text = await readText(this.abs(rel));
      if (text === undefined || (this.original(rel) === undefined && !text.includes(HOOK_COMMAND))) continue;
      try {
        const cleaned = withoutOurHooks(JSON.parse(text) as Json, host);
        const original = this.original(rel);
        // Unchanged since init apart from our hooks: the original bytes come back exactly.
        const restored =
          original !== undefined && JSON.stringify(JSON.parse(original)) === JSON.stringify(cleaned)
            ? original
            : formatJson(cleaned);
        if (restored !== text) {
          await writeFile(this.abs(rel), restored);
          this.changes.push(`removed the atskills hooks from ${rel}`);
        }
      } catch {
        this.changes.push(`left ${rel} alone: it is not valid JSON any more`);
      }
    }
    for (const [rel, { line, separator }] of Object.entries(this.record.pointers)) {
      const text = await readText(this.abs(rel));
      if (text === undefined) continue;
      const lines = text.split('\n');
      const at = lines.findIndex((l) => l === line || l.includes(MARKER));
      if (at < 0) continue;
      lines.splice(at, 1);
      let restored = lines.join('\n');
      if (separator && restored.endsWith('\n') && at === lines.length - 1) restored = restored.slice(0, -1);
      await writeFile(this.abs(rel), restored);
      this.changes.push(`removed the @skills pointer line from ${rel}`);
    }
    for (const [rel, digest] of Object.entries(this.record.created)) {
      const text = await readText(this.abs(rel));
      if (text === undefined) continue;
      if (sha(text) === digest) {
        await rm(this.abs(rel));
        this.changes.push(`deleted ${rel}`);
      } else if (hooksFileHost(rel)) {
        try {
          const cleaned = withoutOurHooks(JSON.parse(text) as Json, hooksFileHost(rel) as HostHooks);
          await writeFile(this.abs(rel), formatJson(cleaned));
          this.changes.push(`removed the atskills hooks from ${rel} (kept your other settings)`);
        } catch {
          this.changes.push(`kept ${rel}: it is not valid JSON any more`);
        }
      } else if (text.split('\n').some((l) => l.includes(MARKER))) {
        // A file init created for its pointer line, which the user wrote to since: the line goes, theirs stay.
        const kept = text.split('\n').filter((l) => !l.includes(MARKER));
        await writeFile(this.abs(rel), kept.join('\n').replace(/^\n+/, ''));
        this.changes.push(`removed the @skills pointer line from ${rel} (kept what was added since)`);
      } else {
        this.changes.push(`kept ${rel}: it changed since init`);
      }
    }
    await rm(this.abs(RECORD_FILE), { force: true });
    for (const dir of [...this.record.createdDirs].reverse()) {
      await rmdir(this.abs(dir)).then(
        () => this.changes.push(`deleted ${dir}/`),
        () => this.changes.push(`kept ${dir}/: it holds other files`),
      );
    }
  }
}

/** The host whose hooks file `rel` is, if it is one. */
function hooksFileHost(rel: string): HostHooks | undefined {
  for (const agent of AGENTS) {
    const host = hostHooks(agent);
    if (host?.file === rel) return host;
  }
  return undefined;
}

/** A problem `init` reports and stops on (exit 1), leaving the file it names untouched. */
class InitError extends Error {
  readonly code = 'init';
}

/** A hooks file's JSON, or an InitError naming the file when init could not edit it without losing anything. */
function hooksJson(rel: string, text: string): Json {
  let settings: unknown;
  try {
    settings = JSON.parse(text);
  } catch {
    throw new InitError(`${rel} is not valid JSON; fix it, then run atskills init again.`);
  }
  if (!isObject(settings))
    throw new InitError(`${rel} does not hold a JSON object; fix it, then run atskills init again.`);
  if (settings.hooks !== undefined && !isObject(settings.hooks))
    throw new InitError(`"hooks" in ${rel} is not a JSON object; fix it, then run atskills init again.`);
  return settings;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether `value` has the shape of the record init writes (older records included). */
function isInitRecord(value: unknown): value is InitRecord {
  if (!isObject(value)) return false;
  const { agent, created, createdDirs, pointers } = value;
  return (
    (AGENTS as readonly unknown[]).includes(agent) &&
    isObject(created) &&
    Object.values(created).every((digest) => typeof digest === 'string') &&
    Array.isArray(createdDirs) &&
    createdDirs.every((dir) => typeof dir === 'string') &&
    isObject(pointers) &&
    Object.values(pointers).every((p) => isObject(p) && typeof p.line === 'string')
  );
}

/** What an earlier run recorded, or undefined; an InitError when the record cannot be read as one. */
async function readRecord(root: string): Promise<InitRecord | undefined> {
  const text = await readText(path.join(root, RECORD_FILE));
  if (text === undefined) return undefined;
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch (error) {
    throw new InitError(`${RECORD_FILE} is not valid JSON (${(error as Error).message}). ${RECORD_ADVICE}`);
  }
  if (!isInitRecord(record))
    throw new InitError(`${RECORD_FILE} does not hold what atskills init records. ${RECORD_ADVICE}`);
  return record;
}

const RECORD_ADVICE = `It lists what atskills init wrote, so that init --remove can undo exactly that: restore it (e.g. from version control), or delete it and run atskills init again (init --remove then undoes only what that run writes). Nothing was changed.`;

/** `atskills init [--agent ...] [--remove]`: wire a project for a host, reversibly. */
export function registerInit(program: Command, ctx: CliContext): void {
  program
    .command('init')
    .description(
      'Set the project up for an agent host (.atskills/, a pointer line, hooks); --remove undoes it',
    )
    .addOption(
      new Option('--agent <host>', 'the host (default: guessed from .claude, .cursor, AGENTS.md)').choices(
        AGENTS,
      ),
    )
    .option('--remove', 'undo what init did, restoring the files it edited byte for byte')
    .option(
      '--suggest',
      "the user-prompt hook appends the hub's skill suggestions for each message (asked on a terminal)",
    )
    .option('--no-suggest', 'no suggestions in the user-prompt hook (the default off a terminal)')
    .addHelpText(
      'after',
      '\nExamples:\n  atskills init --agent claude-code   # CLAUDE.md line + SessionStart/UserPromptSubmit in .claude/settings.json\n  atskills init --agent cursor        # rule file + sessionStart/beforeSubmitPrompt in .cursor/hooks.json\n  atskills init --agent codex         # AGENTS.md line + SessionStart/UserPromptSubmit in .codex/hooks.json\n  atskills init --remove',
    )
    .action(async (opts: { agent?: Agent; remove?: boolean; suggest?: boolean }) => {
      const root = ctx.io.cwd;
      const existing = await readRecord(root);
      if (opts.remove) {
        if (!existing) {
          ctx.out('Nothing to remove: atskills init has not run here (no .atskills/.init.json).');
          return;
        }
        const run = new ProjectInit(root, existing);
        await run.remove();
        ctx.out(run.changes.length ? run.changes.map((c) => `- ${c}`).join('\n') : 'Nothing to remove.');
        return;
      }
      const agent = opts.agent ?? existing?.agent ?? (await detectAgent(root));
      // Every host file init edits is checked before anything is asked or written: a refused run writes nothing.
      const hooksFile = hostHooks(agent)?.file;
      if (hooksFile !== undefined) {
        const text = await readText(path.join(root, hooksFile));
        if (text !== undefined) hooksJson(hooksFile, text);
      }
      const record: InitRecord = existing ?? {
        version: 1,
        agent,
        created: {},
        createdDirs: [],
        pointers: {},
      };
      record.agent = agent;
      if (hostHooks(agent)) {
        // The flag wins; a person at a terminal is asked (once: a re-run keeps the answer); else off.
        record.suggest =
          opts.suggest ??
          record.suggest ??
          (await ctx.confirm(
            "Suggest skills for each message? The user-prompt hook sends the message to the hub and appends up to 3 matching skills' names and descriptions (never bodies).",
          ));
      }
      const { hubUrl } = await ctx.settings();
      // The pointer line and the hooks name this hub: one that is no http(s) URL is refused before any write.
      const { hubRouteUrl } = await import('@atskills/protocol/node');
      hubRouteUrl(hubUrl, '/SKILLS.md');
      const run = new ProjectInit(root, record);
      try {
        await run.createFile('.atskills/.autotrigger', '');
        await run.createFile('.atskills/README.md', README);
        const copy = await fetchSkillsMd(hubUrl);
        if (copy) await run.createFile('.atskills/SKILLS.md', copy);
        const hasCopy = (await readText(path.join(root, '.atskills', 'SKILLS.md'))) !== undefined;
        await run.setPointer(
          instructionFile(agent),
          pointerLine(hubUrl, hasCopy, hostHooks(agent) !== undefined),
          agent,
        );
        const hooks = hostHooks(agent, record.suggest === true);
        if (hooks) await run.setHooks(hooks);
      } finally {
        await writeFile(path.join(root, RECORD_FILE), formatJson(record));
      }
      ctx.out(`atskills init (${agent}, hub ${hubUrl}):`);
      ctx.out(
        run.changes.length
          ? run.changes.map((c) => `- ${c}`).join('\n')
          : '- already set up; nothing changed',
      );
      for (const line of hostAdvice(agent)) ctx.out(line);
      if (hostHooks(agent))
        ctx.out(
          record.suggest
            ? 'Suggestions are on: each message goes to the hub, which may append up to 3 skills (ATSKILLS_SUGGEST=0 turns them off; atskills init --no-suggest removes them).'
            : 'Suggestions are off (atskills init --suggest turns them on).',
        );
      ctx.out('Undo with: atskills init --remove');
    });
}
