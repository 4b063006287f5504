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
  /** `.claude/settings.json` when it existed: the original bytes (base64) to restore. */
  settingsOriginal?: string;
}

const RECORD_FILE = '.atskills/.init.json';
const MARKER = '<!-- atskills:init -->';
const HOOK_COMMAND = 'atskills hook';
const SETTINGS_FILE = '.claude/settings.json';

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

/** The one line that tells an agent how to treat `@skills:` references. */
function pointerLine(hub: string, hasCopy: boolean): string {
  const doc = hasCopy ? `.atskills/SKILLS.md (from ${hub}/SKILLS.md)` : `${hub}/SKILLS.md`;
  return `When a message holds \`@skills:\` references, run \`atskills expand "<the message>"\` and follow what it prints, or follow ${doc}. ${MARKER}`;
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

/** Claude Code's hook groups `init` installs (SessionStart: the resident block; each prompt: its references). */
function claudeHooks(): Record<string, unknown[]> {
  return {
    SessionStart: [{ hooks: [{ type: 'command', command: `${HOOK_COMMAND} session-start`, timeout: 15 }] }],
    UserPromptSubmit: [{ hooks: [{ type: 'command', command: `${HOOK_COMMAND} user-prompt`, timeout: 30 }] }],
  };
}

type Json = Record<string, unknown>;

function isOurGroup(group: unknown): boolean {
  const hooks = (group as { hooks?: unknown }).hooks;
  return (
    Array.isArray(hooks) &&
    hooks.length > 0 &&
    hooks.every(
      (h) =>
        typeof (h as { command?: unknown }).command === 'string' &&
        (h as { command: string }).command.startsWith(`${HOOK_COMMAND} `),
    )
  );
}

/** The settings with our hook groups added to each event (once). */
function withOurHooks(settings: Json): Json {
  const hooks = { ...((settings.hooks as Json | undefined) ?? {}) };
  for (const [event, groups] of Object.entries(claudeHooks())) {
    const existing = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : [];
    hooks[event] = existing.some(isOurGroup) ? existing : [...existing, ...groups];
  }
  return { ...settings, hooks };
}

/** The settings without our hook groups; events and `hooks` left empty by that are dropped. */
function withoutOurHooks(settings: Json): Json {
  if (!settings.hooks || typeof settings.hooks !== 'object') return settings;
  const hooks: Json = {};
  for (const [event, groups] of Object.entries(settings.hooks as Json)) {
    if (!Array.isArray(groups)) {
      hooks[event] = groups;
      continue;
    }
    const kept = groups.filter((g) => !isOurGroup(g));
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

  /** Adds the SessionStart and UserPromptSubmit hooks to .claude/settings.json (keeping everything else). */
  async setClaudeHooks(): Promise<void> {
    const file = this.abs(SETTINGS_FILE);
    const text = await readText(file);
    if (text === undefined) {
      const content = formatJson(withOurHooks({}));
      await this.ensureDir(path.dirname(SETTINGS_FILE));
      await writeFile(file, content);
      this.record.created[SETTINGS_FILE] = sha(content);
      this.changes.push(`created ${SETTINGS_FILE} with SessionStart and UserPromptSubmit hooks`);
      return;
    }
    let settings: Json;
    try {
      settings = JSON.parse(text) as Json;
    } catch {
      throw new InitError(`${SETTINGS_FILE} is not valid JSON; fix it, then run atskills init again.`);
    }
    if (typeof settings !== 'object' || settings === null || Array.isArray(settings))
      throw new InitError(
        `${SETTINGS_FILE} does not hold a JSON object; fix it, then run atskills init again.`,
      );
    const updated = withOurHooks(settings);
    const content = formatJson(updated);
    if (JSON.stringify(updated) === JSON.stringify(settings)) return;
    if (!this.record.created[SETTINGS_FILE] && this.record.settingsOriginal === undefined)
      this.record.settingsOriginal = Buffer.from(text).toString('base64');
    await writeFile(file, content);
    this.changes.push(`added SessionStart and UserPromptSubmit hooks to ${SETTINGS_FILE}`);
  }

  /** Undoes everything the record lists, keeping whatever the user changed since. */
  async remove(): Promise<void> {
    const settingsFile = this.abs(SETTINGS_FILE);
    const settingsText = await readText(settingsFile);
    if (settingsText !== undefined && !this.record.created[SETTINGS_FILE]) {
      try {
        const current = JSON.parse(settingsText) as Json;
        const cleaned = withoutOurHooks(current);
        const original = this.record.settingsOriginal
          ? Buffer.from(this.record.settingsOriginal, 'base64').toString('utf8')
          : undefined;
        // Unchanged since init apart from our hooks: the original bytes come back exactly.
        const restored =
          original !== undefined && JSON.stringify(JSON.parse(original)) === JSON.stringify(cleaned)
            ? original
            : formatJson(cleaned);
        if (restored !== settingsText) {
          await writeFile(settingsFile, restored);
          this.changes.push(`removed the atskills hooks from ${SETTINGS_FILE}`);
        }
      } catch {
        this.changes.push(`left ${SETTINGS_FILE} alone: it is not valid JSON any more`);
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
      } else if (rel === SETTINGS_FILE) {
        const cleaned = withoutOurHooks(JSON.parse(text) as Json);
        await writeFile(this.abs(rel), formatJson(cleaned));
        this.changes.push(`removed the atskills hooks from ${rel} (kept your other settings)`);
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

/** A problem `init` reports and stops on (exit 1), leaving the file it names untouched. */
class InitError extends Error {
  readonly code = 'init';
}

async function readRecord(root: string): Promise<InitRecord | undefined> {
  const text = await readText(path.join(root, RECORD_FILE));
  if (text === undefined) return undefined;
  return JSON.parse(text) as InitRecord;
}

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
    .addHelpText(
      'after',
      '\nExamples:\n  atskills init --agent claude-code   # CLAUDE.md line + SessionStart/UserPromptSubmit hooks\n  atskills init --remove',
    )
    .action(async (opts: { agent?: Agent; remove?: boolean }) => {
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
      const record: InitRecord = existing ?? {
        version: 1,
        agent,
        created: {},
        createdDirs: [],
        pointers: {},
      };
      record.agent = agent;
      const run = new ProjectInit(root, record);
      const { hubUrl } = await ctx.settings();
      try {
        await run.createFile('.atskills/.autotrigger', '');
        await run.createFile('.atskills/README.md', README);
        const copy = await fetchSkillsMd(hubUrl);
        if (copy) await run.createFile('.atskills/SKILLS.md', copy);
        const hasCopy = (await readText(path.join(root, '.atskills', 'SKILLS.md'))) !== undefined;
        await run.setPointer(instructionFile(agent), pointerLine(hubUrl, hasCopy), agent);
        if (agent === 'claude-code') await run.setClaudeHooks();
      } finally {
        await writeFile(path.join(root, RECORD_FILE), formatJson(record));
      }
      ctx.out(`atskills init (${agent}, hub ${hubUrl}):`);
      ctx.out(
        run.changes.length
          ? run.changes.map((c) => `- ${c}`).join('\n')
          : '- already set up; nothing changed',
      );
      if (agent === 'claude-code')
        ctx.out(
          'Claude Code now adds the resident block at session start and resolves @skills: references in each prompt.',
        );
      ctx.out('Undo with: atskills init --remove');
    });
}
