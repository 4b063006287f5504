// `.autotrigger` edits and identity arguments through the real CLI: installs from several processes at once
// keep every line, uninstall names the line that keeps a skill resident, a folder name ending in a space is
// written so it still selects that folder, a reference suffix on an identity argument is taken or refused
// clearly, and a path inside a skill read over git is not-found as the hub answers it (SPEC 1.2).
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJsonOutput, runCliCaptured, spawnCli } from '../../../test/support/cli.js';
import { createRepo } from '../../../test/support/corpus.js';
import { type GitServer, startGitServer } from '../../../test/support/git-server.js';

const skillMd = (name: string) => `---\nname: ${name}\ndescription: Skill ${name}.\n---\nbody of ${name}\n`;

let server: GitServer;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'atskills-lines-'));
  const root = path.join(dir, 'repos');
  await createRepo(root, 'octo/kit', {
    'skills/b/SKILL.md': skillMd('b'),
    'skills/b/inner/SKILL.md': skillMd('inner'),
    'skills/b/scripts/run.sh': 'echo b\n',
    'skills/c/SKILL.md': skillMd('c'),
  });
  server = await startGitServer({ root });
});
afterAll(() => server?.close());

async function project(skills: string[] = []) {
  const cwd = await mkdtemp(path.join(dir, 'project-'));
  for (const skill of skills) {
    await mkdir(path.join(cwd, '.atskills', skill), { recursive: true });
    await writeFile(path.join(cwd, '.atskills', skill, 'SKILL.md'), skillMd(path.basename(skill).trim()));
  }
  const env = {
    PATH: process.env.PATH,
    HOME: cwd,
    XDG_CONFIG_HOME: path.join(cwd, 'config'),
    ATSKILLS_CACHE: path.join(cwd, 'cache'),
    ATSKILLS_GIT_BASE: server.baseUrl,
    ATSKILLS_HUB: 'http://127.0.0.1:9', // no hub: nothing listens on the discard port
  };
  const cli = (...argv: string[]) => runCliCaptured(argv, { cwd, env });
  const autotrigger = () => readFile(path.join(cwd, '.atskills', '.autotrigger'), 'utf8');
  return { cwd, env, cli, autotrigger };
}

describe('.autotrigger edits', () => {
  it('keeps every line when six installs run in parallel processes', async () => {
    const names = ['a', 'b', 'c', 'd', 'e', 'f'].map((n) => `team/${n}`);
    const { cwd, env, autotrigger } = await project(names);
    const runs = await Promise.all(
      names.map((name) => spawnCli(['install', '--offline', name], { cwd, env }).done),
    );
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
    expect((await autotrigger()).split('\n').filter(Boolean).sort()).toEqual(names);
  }, 60_000);

  it('installs a folder whose name ends in a space as a line that selects it', async () => {
    const { cli, autotrigger } = await project(['trail ']);
    const installed = await cli('install', 'trail%20');
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toBe('Installed: /trail\\ \n');
    expect(await autotrigger()).toBe('/trail\\ \n');
    const resident = parseJsonOutput<{ block: string; warnings: { text: string; message: string }[] }>(
      await cli('prompt', '--json', '--offline'),
    );
    expect(resident.block).toBe('- trail: Skill trail. (trail )');
    // Only its name's own warning (the folder is "trail "), naming the line as written.
    expect(resident.warnings.map((w) => [w.text, w.message.split(': ').at(-1)])).toEqual([
      ['/trail\\ ', '"name" should equal the name of the folder holding SKILL.md. [name-folder-mismatch]'],
    ]);
  });

  it('says which line keeps an uninstalled skill resident and how to leave it out', async () => {
    const { cwd, cli } = await project(['hub/acme/playbooks/deploy', 'team/lint']);
    await writeFile(path.join(cwd, '.atskills/.autotrigger'), '@hub:acme/playbooks/\nteam/*\n');
    const folderLine = await cli('uninstall', 'hub:acme/playbooks/deploy');
    expect(folderLine.code).toBe(0);
    expect(folderLine.stdout).toBe('Not installed: @hub:acme/playbooks/deploy\n');
    expect(folderLine.stderr).toBe(
      'warning: hub:acme/playbooks/deploy is still resident: .atskills/.autotrigger line 1 "@hub:acme/playbooks/" selects it. Add the line "!@hub:acme/playbooks/deploy" to that file to leave it out.\n',
    );
    const glob = await cli('uninstall', 'team/lint');
    expect(glob.stderr).toContain('line 2 "team/*" selects it. Add the line "!team/lint"');
    // With the exclusion the user was told to add, nothing keeps it.
    await writeFile(
      path.join(cwd, '.atskills/.autotrigger'),
      '@hub:acme/playbooks/\n!@hub:acme/playbooks/deploy\n',
    );
    expect((await cli('uninstall', 'hub:acme/playbooks/deploy')).stderr).toBe('');
  });
});

describe('identity arguments', () => {
  it('takes the suffix a command means, and refuses another with the command that does it', async () => {
    const { cli, autotrigger } = await project(['team/a']);
    const installed = await cli('install', '--offline', 'team/a:install');
    expect(installed.code, installed.stderr).toBe(0);
    expect(await autotrigger()).toBe('team/a\n');
    expect((await cli('uninstall', 'team/a:install')).stdout).toBe('Uninstalled: team/a\n');

    const get = await cli('get', 'hub:acme/x/y:save');
    expect(get.code).toBe(2);
    expect(get.stderr).toContain(
      '`get` takes an identity; :save is a reference suffix (of @skills: references in a message), not part of it: run `atskills save hub:acme/x/y`.',
    );
    const install = await cli('install', 'hub:acme/x/y:save:install');
    expect(install.code).toBe(2);
    expect(install.stderr).toContain('run `atskills save hub:acme/x/y`');
    const save = await cli('save', 'gh:octo/kit/skills/c:install');
    expect(save.code).toBe(2);
    expect(save.stderr).toContain('run `atskills install gh:octo/kit/skills/c`');
  });
});

describe('a path inside a skill, read over git', () => {
  it('is not-found, as the hub answers it: a nested SKILL.md and a plain sub-folder belong to the skill', async () => {
    const { cli } = await project();
    expect(parseJsonOutput(await cli('get', '--json', 'gh:octo/kit/skills/b'))).toMatchObject({
      kind: 'skill',
      name: 'b',
    });
    for (const inside of ['gh:octo/kit/skills/b/inner', 'gh:octo/kit/skills/b/scripts']) {
      const result = await cli('get', '--json', inside);
      expect(result.code, inside).toBe(3);
      expect(parseJsonOutput(result), inside).toMatchObject({ error: { code: 'not-found' } });
    }
    expect(parseJsonOutput(await cli('get', '--json', 'gh:octo/kit/skills'))).toMatchObject({
      kind: 'menu',
      items: [{ identity: 'gh:octo/kit/skills/b' }, { identity: 'gh:octo/kit/skills/c' }],
    });
  });

  it('is not-found in the project too, saying which skill it belongs to', async () => {
    const { cwd, cli } = await project(['team/b', 'team/b/inner']);
    await mkdir(path.join(cwd, '.atskills/team/b/scripts'));
    await writeFile(path.join(cwd, '.atskills/team/b/scripts/run.sh'), 'echo\n');
    for (const inside of ['team/b/inner', 'team/b/scripts']) {
      const result = await cli('get', inside);
      expect(result.code, inside).toBe(3);
      expect(result.stderr, inside).toContain(`.atskills/${inside} is inside the project skill team/b`);
    }
    expect(parseJsonOutput(await cli('get', '--json', 'team'))).toMatchObject({
      kind: 'menu',
      items: [{ identity: 'team/b' }],
    });
  });
});
