// The CLI against real git over smart HTTP (test/support/git-server.ts) serving repositories rebuilt from
// the shared corpus and small custom repositories: resolution, the validating cache, K, cruft and failures.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { findSkillFolders, parseLsTree, parseSkillMarkdown } from '@atskills/protocol';
import { walkFolder } from '@atskills/protocol/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJsonOutput, runCliCaptured } from '../../../test/support/cli.js';
import {
  buildCorpusRepos,
  commitToRepo,
  corpusReposDir,
  createRepo,
  gitEnv,
} from '../../../test/support/corpus.js';
import { type GitServer, startGitServer } from '../../../test/support/git-server.js';

const run = promisify(execFile);

let corpusRoot: string;
let customRoot: string;
let corpus: GitServer;
let custom: GitServer;
let changingWork: string;

/** A fresh project folder and cache, pointed at `server`. */
async function freshSetup(server: GitServer) {
  const dir = await mkdtemp(path.join(tmpdir(), 'atskills-cli-'));
  const env = {
    ...process.env,
    ATSKILLS_CACHE: path.join(dir, 'cache'),
    ATSKILLS_GIT_BASE: server.baseUrl,
    XDG_CONFIG_HOME: path.join(dir, 'config'),
  };
  const cwd = path.join(dir, 'project');
  const { mkdir } = await import('node:fs/promises');
  await mkdir(cwd, { recursive: true });
  const cli = (...argv: string[]) => runCliCaptured(argv, { cwd, env });
  return { dir, env, cwd, cli };
}

async function headOf(bareDir: string): Promise<string> {
  const { stdout } = await run('git', ['--git-dir', bareDir, 'rev-parse', 'HEAD'], { env: gitEnv() });
  return stdout.trim();
}

async function treeOf(bareDir: string) {
  const { stdout } = await run('git', ['--git-dir', bareDir, 'ls-tree', '-r', '-z', 'HEAD'], {
    env: gitEnv(),
    maxBuffer: 64 * 1024 * 1024,
  });
  return parseLsTree(stdout);
}

async function filesUnder(dir: string): Promise<string[]> {
  return (await walkFolder(dir))
    .filter((e) => e.type !== 'dir')
    .map((e) => `${e.path}${e.type === 'file' ? '' : ` (${e.type})`}`);
}

beforeAll(async () => {
  corpusRoot = await buildCorpusRepos();
  customRoot = await mkdtemp(path.join(tmpdir(), 'atskills-custom-repos-'));
  await createRepo(customRoot, 'acme/tools', {
    'README.md': '# tools\n',
    LICENSE: 'MIT\n',
    'skills/deploy/SKILL.md': '---\nname: deploy\ndescription: Deploy the service.\n---\nRun ./run.sh\n',
    'skills/deploy/run.sh': '#!/bin/sh\necho deploy\n',
    'skills/deploy/refs/guide.md': 'guide\n',
    'skills/deploy/README.md': 'cruft\n',
    'skills/deploy/LICENSE.txt': 'cruft\n',
    'skills/deploy/link.md': { symlink: '../../README.md' },
    'skills/review/SKILL.md': '---\nname: review\ndescription: Review a change.\n---\nLook closely.\n',
  });
  await createRepo(customRoot, 'acme/whole', {
    'SKILL.md': '---\nname: whole\ndescription: A repository that is one skill.\n---\nbody\n',
    'README.md': 'cruft\n',
    LICENSE: 'cruft\n',
    'notes/extra.md': 'kept\n',
  });
  changingWork = (
    await createRepo(customRoot, 'acme/changing', {
      'skills/a/SKILL.md': '---\nname: a\ndescription: Version one.\n---\nfirst body\n',
      'other.txt': 'x\n',
    })
  ).workDir;
  corpus = await startGitServer({ root: corpusRoot });
  custom = await startGitServer({ root: customRoot });
});

afterAll(async () => {
  await corpus?.close();
  await custom?.close();
});

describe('resolving gh: over git', () => {
  it('fetches a corpus skill on first use and serves the next use after a probe only', async () => {
    const { cli } = await freshSetup(corpus);
    const identity = 'gh:obra/superpowers/skills/brainstorming';
    corpus.resetLog();
    const first = await cli('get', '--json', identity);
    expect(first.code, first.stderr).toBe(0);
    const skill = parseJsonOutput(first);
    const bare = path.join(corpusRoot, 'obra/superpowers.git');
    const expected = parseSkillMarkdown(
      await readFile(path.join(corpusReposDir, 'obra/superpowers/files/skills/brainstorming/SKILL.md')),
      'brainstorming',
    );
    expect(skill).toMatchObject({
      kind: 'skill',
      identity,
      revision: await headOf(bare),
      stale: false,
      name: expected.name,
      description: expected.description,
      body: expected.body,
    });
    expect(Object.keys(skill).sort()).toEqual([
      'body',
      'description',
      'dir',
      'flags',
      'identity',
      'kind',
      'name',
      'revision',
      'stale',
    ]);
    // Exactly the skill's files (as listed by git) are in its cache folder.
    const tree = await treeOf(bare);
    const own = tree
      .filter((e) => e.type === 'file' && e.path.startsWith('skills/brainstorming/'))
      .map((e) => e.path.slice('skills/brainstorming/'.length));
    expect((await filesUnder(skill.dir as string)).sort()).toEqual(own.sort());
    expect(corpus.log.some((r) => r.command === 'fetch' && r.pack)).toBe(true);

    corpus.resetLog();
    const second = await cli('get', '--json', identity);
    expect(parseJsonOutput(second)).toEqual(skill);
    expect(corpus.log.length).toBeGreaterThan(0);
    expect(corpus.log.filter((r) => r.command === 'fetch' || r.pack)).toEqual([]);
  });

  it('resolves a folder without SKILL.md as a menu of the skills beneath it', async () => {
    const { cli } = await freshSetup(corpus);
    const result = await cli('get', '--json', 'gh:obra/superpowers/skills');
    expect(result.code, result.stderr).toBe(0);
    const menu = parseJsonOutput<{
      kind: string;
      items: { identity: string; name: string; description: string }[];
    }>(result);
    const skills = findSkillFolders(await treeOf(path.join(corpusRoot, 'obra/superpowers.git')), 'skills');
    expect(menu.kind).toBe('menu');
    expect(menu.items.map((i) => i.identity)).toEqual(skills.map((s) => `gh:obra/superpowers/${s}`));
    expect(menu.items.find((i) => i.name === 'brainstorming')?.description).toMatch(/creative work/);

    const text = await cli('get', 'gh:obra/superpowers/skills');
    expect(text.stdout).toContain('- gh:obra/superpowers/skills/brainstorming: You MUST use this');
  });

  it('refuses a reference over K before downloading any blob, offering sub-collections', async () => {
    const { cli } = await freshSetup(corpus);
    corpus.resetLog();
    const result = await cli('get', '--json', 'gh:ComposioHQ/awesome-claude-skills');
    expect(result.code).toBe(5);
    const { error } = parseJsonOutput<{
      error: { code: string; count: number; subcollections: { identity: string; count: number }[] };
    }>(result);
    const total = findSkillFolders(
      await treeOf(path.join(corpusRoot, 'ComposioHQ/awesome-claude-skills.git')),
    ).length;
    expect(error.code).toBe('over-cap');
    expect(error.count).toBe(total);
    expect(error.subcollections.length).toBeGreaterThan(0);
    expect(error.subcollections.length).toBeLessThanOrEqual(6);
    for (const s of error.subcollections) {
      expect(s.identity).toMatch(/^gh:ComposioHQ\/awesome-claude-skills\/.+/);
      expect(s.count).toBeLessThanOrEqual(128);
    }
    // One pack only: the blob-less clone's commit and trees. No blob fetch came after it.
    const fetches = corpus.log.filter((r) => r.command === 'fetch');
    expect(fetches).toHaveLength(1);
    expect(parseJsonOutput<{ entries: unknown[] }>(await cli('cache', 'ls', '--json')).entries).toEqual([]);
  });

  it('keeps README, LICENSE, .git and symlinks out of the cache', async () => {
    const { cli } = await freshSetup(custom);
    const deploy = parseJsonOutput(await cli('get', '--json', 'gh:acme/tools/skills/deploy'));
    expect((await filesUnder(deploy.dir as string)).sort()).toEqual(['SKILL.md', 'refs/guide.md', 'run.sh']);
    const whole = parseJsonOutput(await cli('get', '--json', 'gh:acme/whole'));
    expect(whole.kind).toBe('skill');
    expect((await filesUnder(whole.dir as string)).sort()).toEqual(['SKILL.md', 'notes/extra.md']);
  });

  it('picks up an upstream commit that changes the skill, and reuses content when only other files change', async () => {
    const { cli } = await freshSetup(custom);
    const identity = 'gh:acme/changing/skills/a';
    const v1 = parseJsonOutput(await cli('get', '--json', identity));
    expect(v1.description).toBe('Version one.');
    const rev2 = await commitToRepo(changingWork, {
      'skills/a/SKILL.md': '---\nname: a\ndescription: Version two.\n---\nsecond body\n',
    });
    const v2 = parseJsonOutput(await cli('get', '--json', identity));
    expect(v2).toMatchObject({
      revision: rev2,
      description: 'Version two.',
      body: 'second body\n',
      stale: false,
    });
    expect(await readFile(path.join(v2.dir as string, 'SKILL.md'), 'utf8')).toContain('second body');

    custom.resetLog();
    const rev3 = await commitToRepo(changingWork, { 'other.txt': 'y\n' });
    const v3 = parseJsonOutput(await cli('get', '--json', identity));
    expect(v3).toMatchObject({ revision: rev3, dir: v2.dir, body: 'second body\n' });
    // The new commit's trees were fetched, but the unchanged skill's blobs were not downloaded again.
    expect(custom.log.filter((r) => r.command === 'fetch')).toHaveLength(1);
  });
});

describe('when the git server fails', () => {
  let server: GitServer;
  beforeAll(async () => {
    server = await startGitServer({ root: customRoot });
  });
  afterAll(() => server.close());

  it('serves the cache marked stale when stopped, and says why when nothing is cached', async () => {
    const { cli } = await freshSetup(server);
    const cached = parseJsonOutput(await cli('get', '--json', 'gh:acme/tools/skills/review'));
    await server.stop();
    try {
      const stale = await cli('get', '--json', 'gh:acme/tools/skills/review');
      expect(stale.code).toBe(0);
      expect(parseJsonOutput(stale)).toEqual({ ...cached, stale: true });
      const text = await cli('get', 'gh:acme/tools/skills/review');
      expect(text.stdout).toMatch(/status="stale \(.*cannot be reached/);

      const missing = await cli('get', '--json', 'gh:acme/tools/skills/deploy');
      expect(missing.code).toBe(4);
      expect(parseJsonOutput<{ error: { code: string; message: string } }>(missing).error).toMatchObject({
        code: 'offline',
        message: expect.stringMatching(/cannot be reached/),
      });
    } finally {
      await server.start();
    }
  });

  it.each([
    ['a 500', 500],
    ['garbage with status 200', 200],
  ])('treats %s as a network failure: stale cache or a clear error', async (_label, status) => {
    const { cli } = await freshSetup(server);
    const cached = parseJsonOutput(await cli('get', '--json', 'gh:acme/tools/skills/review'));
    server.setFailure(status);
    try {
      expect(parseJsonOutput(await cli('get', '--json', 'gh:acme/tools/skills/review'))).toEqual({
        ...cached,
        stale: true,
      });
      const missing = await cli('get', '--json', 'gh:acme/whole');
      expect(missing.code).toBe(4);
      expect(parseJsonOutput<{ error: { code: string } }>(missing).error.code).toBe('network');
    } finally {
      server.setFailure(null);
    }
  });

  it('never touches the network with --offline', async () => {
    const { cli } = await freshSetup(server);
    await cli('get', 'gh:acme/tools/skills/review');
    server.resetLog();
    const offline = await cli('get', '--json', '--offline', 'gh:acme/tools/skills/review');
    expect(parseJsonOutput(offline)).toMatchObject({ stale: true, kind: 'skill' });
    const missing = await cli('get', '--json', '--offline', 'gh:acme/tools/skills/deploy');
    expect(missing.code).toBe(4);
    expect(parseJsonOutput<{ error: { code: string } }>(missing).error.code).toBe('offline');
    expect(server.log).toEqual([]);
  });

  it('answers not-found for a missing repository or path, and no-access when the server refuses', async () => {
    const { cli } = await freshSetup(server);
    const noRepo = await cli('get', '--json', 'gh:acme/nope');
    expect(noRepo.code).toBe(3);
    const noPath = await cli('get', '--json', 'gh:acme/tools/skills/nope');
    expect(noPath.code).toBe(3);
    expect(parseJsonOutput<{ error: { message: string } }>(noPath).error.message).toContain('skills/nope');
    server.setFailure(401);
    try {
      const refused = await cli('get', '--json', 'gh:acme/whole');
      expect(refused.code).toBe(7);
    } finally {
      server.setFailure(null);
    }
  });
});

describe('private repositories', () => {
  it('sends GITHUB_TOKEN to the git host and answers no-access without it', async () => {
    const expected = `Basic ${Buffer.from('x-access-token:tok-123').toString('base64')}`;
    const server = await startGitServer({
      root: customRoot,
      authorize: (_repo, auth) => (auth === expected ? 200 : 401),
    });
    try {
      const { cli, env, cwd } = await freshSetup(server);
      const refused = await cli('get', '--json', 'gh:acme/tools/skills/review');
      expect(refused.code).toBe(7);
      expect(parseJsonOutput<{ error: { code: string } }>(refused).error.code).toBe('no-access');
      const allowed = await runCliCaptured(['get', '--json', 'gh:acme/tools/skills/review'], {
        cwd,
        env: { ...env, GITHUB_TOKEN: 'tok-123' },
      });
      expect(allowed.code, allowed.stderr).toBe(0);
      expect(parseJsonOutput(allowed)).toMatchObject({ kind: 'skill', name: 'review' });
      expect(server.log.filter((r) => r.status === 200).every((r) => r.authorization === expected)).toBe(
        true,
      );
    } finally {
      await server.close();
    }
  });
});

describe('project files first', () => {
  it('answers from .atskills without any request', async () => {
    const { cli, cwd } = await freshSetup(custom);
    const { mkdir, writeFile } = await import('node:fs/promises');
    await mkdir(path.join(cwd, '.atskills/deploy/runbook'), { recursive: true });
    await writeFile(
      path.join(cwd, '.atskills/deploy/runbook/SKILL.md'),
      '---\nname: runbook\ndescription: Local runbook.\n---\nlocal body\n',
    );
    custom.resetLog();
    const local = parseJsonOutput(await cli('get', '--json', 'deploy/runbook'));
    expect(local).toMatchObject({
      kind: 'skill',
      revision: 'local',
      stale: false,
      body: 'local body\n',
      dir: path.join(cwd, '.atskills/deploy/runbook'),
    });
    const menu = parseJsonOutput(await cli('get', '--json', 'deploy'));
    expect(menu).toMatchObject({
      kind: 'menu',
      items: [{ identity: 'deploy/runbook', name: 'runbook', description: 'Local runbook.' }],
    });
    const missing = await cli('get', '--json', 'deploy/nothing');
    expect(missing.code).toBe(3);
    expect(custom.log).toEqual([]);
    expect(existsSync(path.join(cwd, '..', 'cache'))).toBe(false);
    expect(await readdir(cwd)).toEqual(['.atskills']);
  });
});
