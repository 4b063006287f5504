import { execFile } from 'node:child_process';
import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCorpusRepos, createRepo, gitEnv } from './corpus.js';
import { type GitServer, startGitServer } from './git-server.js';

const run = promisify(execFile);

describe('git smart-HTTP test server', () => {
  let server: GitServer;
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'git-server-test-'));
    await createRepo(root, 'acme/tools', { 'skills/a/SKILL.md': '---\nname: a\ndescription: A.\n---\n' });
    server = await startGitServer({ root });
  });
  afterAll(() => server.close());

  it('answers ls-remote as a probe without sending a pack', async () => {
    const { stdout } = await run('git', ['ls-remote', `${server.baseUrl}/acme/tools.git`, 'HEAD'], {
      env: gitEnv(),
    });
    expect(stdout).toMatch(/^[0-9a-f]{40}\tHEAD/);
    expect(server.log.some((r) => r.command === 'ls-refs' || r.command === 'info-refs')).toBe(true);
    expect(server.log.some((r) => r.pack)).toBe(false);
  });

  it('serves a blob-filtered shallow clone and logs the pack', async () => {
    server.resetLog();
    const dest = path.join(root, 'clone');
    await run(
      'git',
      [
        'clone',
        '-q',
        '--depth',
        '1',
        '--filter=blob:none',
        '--no-checkout',
        `${server.baseUrl}/acme/tools.git`,
        dest,
      ],
      { env: gitEnv() },
    );
    expect(server.log.filter((r) => r.command === 'fetch' && r.pack).length).toBe(1);
  });

  it('refuses with the injected status while failing and recovers', async () => {
    server.setFailure(503);
    await expect(
      run('git', ['ls-remote', `${server.baseUrl}/acme/tools.git`], { env: gitEnv() }),
    ).rejects.toThrow();
    server.setFailure(null);
    await expect(
      run('git', ['ls-remote', `${server.baseUrl}/acme/tools.git`], { env: gitEnv() }),
    ).resolves.toBeTruthy();
  });

  it('rebuilds every corpus repository as a bare repository', async () => {
    const dir = await buildCorpusRepos();
    const owners = await readdir(dir);
    expect(owners).toContain('obra');
    const { stdout } = await run(
      'git',
      ['--git-dir', path.join(dir, 'obra/superpowers.git'), 'ls-tree', '-r', '--name-only', 'HEAD'],
      { env: gitEnv() },
    );
    expect(stdout).toContain('skills/brainstorming/SKILL.md');
  });
});
