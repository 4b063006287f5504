// What a real `atskills` process loads: commands that never count tokens must not load gpt-tokenizer's o200k
// tables, which cost ~0.5 s of every start-up when the protocol barrel imported them. A module-resolution
// hook (test/support/module-log.mjs) records every module the process resolves, so the check is about which
// modules load, never about timing. `prompt` is the control: it counts tokens, so it must load them. Commands
// that resolve nothing (`refs`, `--help`) must not load the node half of the protocol (resolver, git, tar)
// either: each command's action imports it when it runs.
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { spawnCli } from '../../../test/support/cli.js';
import { repoRoot } from '../../../test/support/corpus.js';

const HOOK = pathToFileURL(path.join(repoRoot, 'test', 'support', 'module-log.mjs')).href;
const TOKENIZER = '/node_modules/gpt-tokenizer/';
const PROTOCOL_NODE = '/packages/protocol/src/node/';

let dir: string;
let project: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'atskills-start-up-'));
  project = path.join(dir, 'project');
  await mkdir(path.join(project, '.atskills', 'demo'), { recursive: true });
  await writeFile(
    path.join(project, '.atskills', 'demo', 'SKILL.md'),
    '---\nname: demo\ndescription: A local demo skill.\n---\ndemo body\n',
  );
  await writeFile(path.join(project, '.atskills', '.autotrigger'), 'demo\n');
});

/** Runs `atskills <argv>` as a child process and returns its result and every module URL it resolved. */
async function runLogged(name: string, argv: string[], stdin?: string) {
  const log = path.join(dir, `${name}.modules`);
  await writeFile(log, '');
  const result = await spawnCli(argv, {
    cwd: project,
    env: {
      PATH: process.env.PATH,
      HOME: dir,
      XDG_CONFIG_HOME: path.join(dir, 'config'),
      ATSKILLS_CACHE: path.join(dir, 'cache'),
      ATSKILLS_MODULE_LOG: log,
      NODE_OPTIONS: `--import=${HOOK}`,
    },
    ...(stdin !== undefined ? { stdin } : {}),
  }).done;
  const modules = (await readFile(log, 'utf8')).split('\n').filter(Boolean);
  return { ...result, modules };
}

describe('start-up modules of the atskills process', () => {
  it.each([
    ['refs', ['refs', '--json', 'use @skills:gh:acme/kit/skills/a now'], false],
    ['get', ['get', '--offline', 'demo'], true],
    ['help', ['--help'], false],
    // A hook shows no count: the resident block is injected without loading the tokenizer (SPEC 2.5).
    ['hook', ['hook', 'session-start', '--host', 'codex'], true],
  ])('%s loads no gpt-tokenizer, and the node half only if it resolves', async (name, argv, resolves) => {
    const run = await runLogged(name, argv);
    expect(run.code, run.stderr).toBe(0);
    // The hook saw the CLI itself, so an empty log cannot pass by accident.
    expect(run.modules.some((url) => url.endsWith('/apps/cli/src/main.ts'))).toBe(true);
    expect(run.modules.filter((url) => url.includes(TOKENIZER))).toEqual([]);
    if (name === 'hook') expect(run.stdout).toContain('- demo: A local demo skill. (demo)');
    const nodeHalf = run.modules.filter((url) => url.includes(PROTOCOL_NODE));
    if (resolves) expect(nodeHalf).not.toEqual([]);
    else expect(nodeHalf).toEqual([]);
  });

  it('the user-prompt hook answers a message without a reference, suggestions off, without the node half', async () => {
    const run = await runLogged(
      'hook-plain',
      ['hook', 'user-prompt', '--host', 'claude-code'],
      JSON.stringify({ cwd: project, prompt: 'just fix the bug' }),
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('');
    expect(run.modules.some((url) => url.endsWith('/apps/cli/src/main.ts'))).toBe(true);
    expect(run.modules.filter((url) => url.includes(PROTOCOL_NODE))).toEqual([]);
  });

  it('prompt loads gpt-tokenizer when it counts the resident block', async () => {
    const run = await runLogged('prompt', ['prompt', '--json', '--offline']);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ block: '- demo: A local demo skill. (demo)' });
    expect(run.modules.some((url) => url.includes(TOKENIZER))).toBe(true);
  });
});
