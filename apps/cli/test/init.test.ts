// `atskills init` per host, then the hooks run the way Claude Code runs them: the command string from
// .claude/settings.json through `sh -c` in the project folder, the event JSON on stdin, the JSON on stdout.
// `atskills` on PATH is the bundled package (what `npm install -g <hub>/cli/atskills.tgz` installs).
// `init --remove` must give back every file byte for byte.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installBundledClient, runCliCaptured, snapshotTree, stdinOf } from '../../../test/support/cli.js';
import { unusedPort } from '../../../test/support/ports.js';
import { runCli } from '../src/index.js';

const execFileAsync = promisify(execFile);

let dir: string;
let binDir: string;
let downHub: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'atskills-init-'));
  binDir = await installBundledClient(dir);
  downHub = `http://127.0.0.1:${await unusedPort()}`;
}, 60_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

function envFor(project: string): NodeJS.ProcessEnv {
  return {
    PATH: `${binDir}:${process.env.PATH}`,
    HOME: project,
    XDG_CONFIG_HOME: path.join(project, '..', `${path.basename(project)}-config`),
    ATSKILLS_CACHE: path.join(project, '..', `${path.basename(project)}-cache`),
    ATSKILLS_HUB: downHub,
  };
}

async function newProject(name: string, files: Record<string, string>): Promise<string> {
  const project = path.join(dir, name);
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(project, rel)), { recursive: true });
    await writeFile(path.join(project, rel), content);
  }
  await mkdir(project, { recursive: true });
  return project;
}

/** Runs one hook of .claude/settings.json as Claude Code does: sh -c <command>, event JSON on stdin. */
async function runHook(project: string, event: 'SessionStart' | 'UserPromptSubmit', input: object) {
  const settings = JSON.parse(await readFile(path.join(project, '.claude', 'settings.json'), 'utf8'));
  const commands: string[] = settings.hooks[event].flatMap((g: { hooks: { command: string }[] }) =>
    g.hooks.map((h) => h.command),
  );
  expect(commands).toHaveLength(1);
  const started = performance.now();
  const child = execFileAsync('sh', ['-c', commands[0]!], { cwd: project, env: envFor(project) });
  child.child.stdin?.end(
    JSON.stringify({ session_id: 's1', hook_event_name: event, cwd: project, ...input }),
  );
  const { stdout } = await child;
  return { stdout, ms: performance.now() - started };
}

const SKILL =
  '---\nname: runbook\ndescription: Deploy the service step by step.\n---\n# Runbook\n\nShip it.\n';

describe('atskills init --agent claude-code', () => {
  it('installs hooks that add the resident block and resolve references; --remove restores every byte', async () => {
    const project = await newProject('claude', {
      'CLAUDE.md': '# House rules\n\nNo force pushes.', // no final newline: the restore must keep that
      '.claude/settings.json': '{\n    "permissions": { "allow": ["Bash(ls)"] }\n}\n', // 4-space indent
      '.atskills/deploy/runbook/SKILL.md': SKILL,
    });
    const before = await snapshotTree(project);

    const init = await runCliCaptured(['init', '--agent', 'claude-code'], {
      cwd: project,
      env: envFor(project),
    });
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain('added one @skills pointer line at the end of CLAUDE.md');
    expect(init.stdout).toContain('added SessionStart and UserPromptSubmit hooks to .claude/settings.json');
    const claudeMd = await readFile(path.join(project, 'CLAUDE.md'), 'utf8');
    expect(claudeMd.startsWith('# House rules\n\nNo force pushes.\n')).toBe(true);
    expect(claudeMd.split('\n').filter((l) => l.includes('atskills:init'))).toHaveLength(1);
    expect(claudeMd).toContain(`${downHub}/SKILLS.md`); // the hub is down: no copy, the pointer names the URL
    const settings = JSON.parse(await readFile(path.join(project, '.claude', 'settings.json'), 'utf8'));
    expect(settings.permissions).toEqual({ allow: ['Bash(ls)'] });
    expect(await readFile(path.join(project, '.atskills', '.autotrigger'), 'utf8')).toBe('');
    expect(await readFile(path.join(project, '.atskills', 'README.md'), 'utf8')).toContain('.autotrigger');

    // Idempotent: a second run changes nothing.
    const afterFirst = await snapshotTree(project);
    const again = await runCliCaptured(['init', '--agent', 'claude-code'], {
      cwd: project,
      env: envFor(project),
    });
    expect(again.stdout).toContain('nothing changed');
    expect(await snapshotTree(project)).toEqual(afterFirst);

    // A prompt without references: nothing injected.
    expect((await runHook(project, 'UserPromptSubmit', { prompt: 'just fix the bug' })).stdout).toBe('');

    // A reference with :install: the skill is injected and the install happens.
    const prompt = await runHook(project, 'UserPromptSubmit', {
      prompt: 'deploy it with @skills:deploy/runbook:install please',
    });
    const injected = JSON.parse(prompt.stdout);
    expect(injected.hookSpecificOutput.hookEventName).toBe('UserPromptSubmit');
    const context: string = injected.hookSpecificOutput.additionalContext;
    expect(context).toMatch(
      /<skill-text-[0-9a-f]{16} kind="skill" identity="deploy\/runbook" name="runbook" revision="local"/,
    );
    expect(context).toContain('# Runbook\n\nShip it.');
    expect(context).toContain('installed: deploy/runbook');
    expect(await readFile(path.join(project, '.atskills', '.autotrigger'), 'utf8')).toBe('deploy/runbook\n');

    // Session start: the resident block of .autotrigger.
    const start = JSON.parse((await runHook(project, 'SessionStart', { source: 'startup' })).stdout);
    expect(start.hookSpecificOutput.hookEventName).toBe('SessionStart');
    expect(start.hookSpecificOutput.additionalContext).toContain(
      '- runbook: Deploy the service step by step. (deploy/runbook)',
    );

    // The hub is down and the cloud skill was never cached: the hook still answers at once, with the
    // failure in the context, and exits 0 (a failing hook must not block the prompt).
    const down = await runHook(project, 'UserPromptSubmit', { prompt: 'try @skills:hub:acme/tools/lint' });
    const downContext: string = JSON.parse(down.stdout).hookSpecificOutput.additionalContext;
    expect(downContext).toContain('(atskills: @skills:hub:acme/tools/lint was not loaded [offline]');
    expect(downContext).toContain('cannot be reached');
    expect(down.ms).toBeLessThan(10_000);

    // Undo the install, then remove: every file as it was.
    await runCliCaptured(['uninstall', 'deploy/runbook'], { cwd: project, env: envFor(project) });
    const removed = await runCliCaptured(['init', '--remove'], { cwd: project, env: envFor(project) });
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toContain('removed the @skills pointer line from CLAUDE.md');
    expect(await snapshotTree(project)).toEqual(before);
  });

  it('creates CLAUDE.md and .claude/settings.json when missing, and --remove deletes them again', async () => {
    const project = await newProject('claude-empty', { 'src/app.js': 'console.log(1)\n' });
    const before = await snapshotTree(project);
    const init = await runCliCaptured(['init', '--agent', 'claude-code'], {
      cwd: project,
      env: envFor(project),
    });
    expect(init.stdout).toContain('created .claude/settings.json');
    expect(init.stdout).toContain('created CLAUDE.md');
    const start = await runHook(project, 'SessionStart', { source: 'startup' });
    expect(start.stdout).toBe(''); // nothing installed yet: nothing to add
    await runCliCaptured(['init', '--remove'], { cwd: project, env: envFor(project) });
    expect(await snapshotTree(project)).toEqual(before);
  });

  it('takes its pointer line out of a file it created that the user wrote to since, and refuses a bad hub URL', async () => {
    const project = await newProject('claude-edited', { 'src/app.js': 'console.log(1)\n' });
    await runCliCaptured(['init', '--agent', 'claude-code'], { cwd: project, env: envFor(project) });
    await writeFile(
      path.join(project, 'CLAUDE.md'),
      `${await readFile(path.join(project, 'CLAUDE.md'), 'utf8')}Use pnpm.\n`,
    );
    const removed = await runCliCaptured(['init', '--remove'], { cwd: project, env: envFor(project) });
    expect(removed.stdout).toContain('removed the @skills pointer line from CLAUDE.md');
    expect(await readFile(path.join(project, 'CLAUDE.md'), 'utf8')).toBe('Use pnpm.\n');
    // The pointer line would name a hub no client can reach: nothing is written.
    const bad = await runCliCaptured(['init', '--agent', 'cursor'], {
      cwd: project,
      env: { ...envFor(project), ATSKILLS_HUB: 'localhost:8102' },
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('"localhost:8102" (ATSKILLS_HUB');
    expect(existsSync(path.join(project, '.cursor'))).toBe(false);
  });

  it('refuses a settings file that is not JSON before writing anything', async () => {
    for (const [name, settings] of [
      ['claude-broken', '{ not json'],
      ['claude-comment', '{\n  // my hooks\n  "hooks": {}\n}\n'],
      ['claude-hooks-list', '{ "hooks": [] }\n'],
    ] as const) {
      const project = await newProject(name, { '.claude/settings.json': settings });
      const before = await snapshotTree(project);
      const init = await runCliCaptured(['init', '--agent', 'claude-code', '--no-suggest'], {
        cwd: project,
        env: envFor(project),
      });
      expect(init.code, name).toBe(1);
      expect(init.stderr).toMatch(/\.claude\/settings\.json (is not valid JSON|is not a JSON object)/);
      // No CLAUDE.md, no .atskills/: a refused run writes nothing.
      expect(await snapshotTree(project), name).toEqual(before);
    }
  });

  it('says what to do with a record that is not JSON, on init and init --remove, changing nothing', async () => {
    for (const [i, record] of ['{bad\n', '[]\n', '{"version":1}\n'].entries()) {
      const project = await newProject(`claude-bad-record-${i}`, { '.atskills/.init.json': record });
      const before = await snapshotTree(project);
      for (const argv of [
        ['init', '--agent', 'claude-code', '--no-suggest'],
        ['init', '--remove'],
      ]) {
        const run = await runCliCaptured(argv, { cwd: project, env: envFor(project) });
        expect(run.code, `${argv.join(' ')} on ${record}`).toBe(1);
        expect(run.stderr).toMatch(/^atskills: \.atskills\/\.init\.json (is not valid JSON|does not hold)/);
        expect(run.stderr).toContain('delete it and run atskills init again');
        expect(run.stderr).not.toContain('unexpected failure');
        expect(await snapshotTree(project)).toEqual(before);
      }
    }
  });
});

describe.each([
  ['cursor', '.cursor/rules/atskills.mdc', {}],
  ['codex', 'AGENTS.md', { 'AGENTS.md': '# Agents\n\n- run the tests\n' }],
  ['generic', 'AGENTS.md', {}],
] as const)('atskills init --agent %s (pointer line)', (agent, file, files) => {
  it(`adds one pointer line to ${file}, and --remove restores the project`, async () => {
    const project = await newProject(`host-${agent}`, {
      ...files,
      '.atskills/deploy/runbook/SKILL.md': SKILL,
    });
    const before = await snapshotTree(project);
    const init = await runCliCaptured(['init', '--agent', agent], { cwd: project, env: envFor(project) });
    expect(init.code, init.stderr).toBe(0);
    const text = await readFile(path.join(project, file), 'utf8');
    const pointer = text.split('\n').filter((l) => l.includes('atskills:init'));
    expect(pointer).toHaveLength(1);
    // The message travels on stdin: the line never asks for it on a command line (SPEC 2.5).
    expect(pointer[0]).toContain("atskills expand - <<'ATSKILLS_MESSAGE'");
    expect(pointer[0]).not.toContain('"<the message>"');
    if (agent === 'cursor') expect(text).toMatch(/^---\n[\s\S]*alwaysApply: true\n---\n/);
    // With a prompt hook the agent expands only what the hook did not inject (a Cursor build may drop it).
    if (agent === 'generic') expect(pointer[0]).toMatch(/^When a message holds `@skills:` references, pass/);
    else expect(pointer[0]).toContain('your context has no `<skill-text-…>` frame or atskills line for them');
    if (agent === 'codex') expect(text.startsWith('# Agents\n\n- run the tests\n')).toBe(true);
    // The agent runs what the pointer line says: the message in a quoted here-document, so `$(...)` and
    // backticks in it stay text.
    const message = 'use @skills:deploy/runbook and keep `touch tick` and $(touch pwned) as they are';
    const expanded = await execFileAsync(
      'sh',
      ['-c', `atskills expand - <<'ATSKILLS_MESSAGE'\n${message}\nATSKILLS_MESSAGE`],
      { cwd: project, env: envFor(project) },
    );
    expect(expanded.stdout).toContain('# Runbook\n\nShip it.');
    expect(await readdir(project)).not.toContain('pwned');
    expect(await readdir(project)).not.toContain('tick');
    await runCliCaptured(['init', '--remove'], { cwd: project, env: envFor(project) });
    expect(await snapshotTree(project)).toEqual(before);
  });
});

describe('init and suggestions', () => {
  /** `atskills init` in-process with stdin and stdout flagged as terminals, `answer` typed at the question. */
  async function initAtTerminal(project: string, answer: string, extra: string[] = []) {
    let stdout = '';
    let stderr = '';
    const stdin = Object.assign(stdinOf(`${answer}\n`), { isTTY: true });
    const code = await runCli(['init', '--agent', 'claude-code', ...extra], {
      cwd: project,
      env: envFor(project),
      stdout: Object.assign({ write: (s: string) => (stdout += s) }, { isTTY: true }),
      stderr: { write: (s: string) => (stderr += s) },
      stdin,
    });
    return { code, stdout, stderr };
  }

  const promptHook = async (project: string) =>
    JSON.parse(await readFile(path.join(project, '.claude', 'settings.json'), 'utf8')).hooks
      .UserPromptSubmit[0].hooks[0].command as string;

  it('asks on a terminal, records the answer on the hook command line, and a flag answers without asking', async () => {
    const yes = path.join(dir, 'suggest-yes');
    await mkdir(yes);
    const asked = await initAtTerminal(yes, 'y');
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stderr).toMatch(/Suggest skills for each message\? .* \[y\/N\]/);
    expect(await promptHook(yes)).toBe('atskills hook user-prompt --host claude-code --suggest');
    expect(asked.stdout).toContain('Suggestions are on');

    const no = path.join(dir, 'suggest-no');
    await mkdir(no);
    const declined = await initAtTerminal(no, 'n');
    expect(await promptHook(no)).toBe('atskills hook user-prompt --host claude-code');
    expect(declined.stdout).toContain('Suggestions are off');

    // A flag is never asked about; off a terminal, the default is off.
    const flagged = await initAtTerminal(no, '', ['--suggest']);
    expect(flagged.stderr).not.toContain('Suggest skills');
    expect(await promptHook(no)).toBe('atskills hook user-prompt --host claude-code --suggest');
    const quiet = path.join(dir, 'suggest-quiet');
    await mkdir(quiet);
    const piped = await runCliCaptured(['init', '--agent', 'claude-code'], {
      cwd: quiet,
      env: envFor(quiet),
    });
    expect(piped.code, piped.stderr).toBe(0);
    expect(await promptHook(quiet)).toBe('atskills hook user-prompt --host claude-code');
  });
});
