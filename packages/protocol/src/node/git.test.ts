import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyGitFailure, GitError, gitFailureDetail, parseLsRemoteHead, runGit } from './git.js';

describe('classifyGitFailure', () => {
  it.each([
    ["fatal: repository 'http://h/o/r.git/' not found", 'not-found'],
    ["fatal: unable to access 'http://h/o/r.git/': The requested URL returned error: 404", 'not-found'],
    ["fatal: unable to access 'http://h/o/r.git/': The requested URL returned error: 410", 'not-found'],
    ['fatal: Remote branch main not found in upstream origin', 'ref-not-found'],
    ["fatal: couldn't find remote ref refs/heads/gone", 'ref-not-found'],
    ['error: Server does not allow request for unadvertised object abc: not our ref', 'ref-not-found'],
    ["fatal: unable to access 'http://h/o/r.git/': The requested URL returned error: 403", 'access-denied'],
    ["fatal: could not read Username for 'https://github.com': terminal prompts disabled", 'access-denied'],
    ["fatal: unable to access 'http://h/o/r.git/': The requested URL returned error: 429", 'rate-limited'],
    ["fatal: unable to access 'http://h/o/r.git/': The requested URL returned error: 503", 'server-error'],
    [
      "fatal: unable to access 'http://h/': Failed to connect to h port 80: Connection refused",
      'unreachable',
    ],
    ["fatal: unable to access 'https://x/': Could not resolve host: x", 'unreachable'],
    ['error: RPC failed; curl 28 Operation too slow. Less than 1 bytes/sec transferred', 'unreachable'],
    ['fatal: bad object deadbeef', 'other'],
  ])('%s -> %s', (stderr, kind) => {
    expect(classifyGitFailure(stderr)).toBe(kind);
  });

  it('quotes the first fatal or error line', () => {
    expect(gitFailureDetail('warning: x\nfatal: it broke\nmore')).toBe('fatal: it broke');
    expect(gitFailureDetail('\nsomething odd\n')).toBe('something odd');
  });
});

describe('parseLsRemoteHead', () => {
  it('reads the head commit and the default branch', () => {
    const sha = 'a'.repeat(40);
    expect(parseLsRemoteHead(`ref: refs/heads/main\tHEAD\n${sha}\tHEAD\n`)).toEqual({
      commit: sha,
      branch: 'main',
    });
  });

  it('gives a null commit for an empty repository', () => {
    expect(parseLsRemoteHead('')).toEqual({ commit: null, branch: null });
  });
});

describe('runGit', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'atskills-git-'));
    await writeFile(path.join(dir, '.gitconfig'), '[user]\n\tname = From The User Config\n');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('runs isolated from the user git configuration unless asked to read it', async () => {
    const env = { HOME: dir, XDG_CONFIG_HOME: path.join(dir, 'xdg') };
    const isolated = runGit(['config', '--get', 'user.name'], { env });
    await expect(isolated).rejects.toBeInstanceOf(GitError);
    const user = await runGit(['config', '--get', 'user.name'], { env, userConfig: true });
    expect(user.toString('utf8').trim()).toBe('From The User Config');
  });

  it('passes configuration and the token through the environment, never argv', async () => {
    const out = await runGit(['config', '--get-all', 'http.extraHeader'], { token: 'secret-token' });
    const basic = Buffer.from('x-access-token:secret-token').toString('base64');
    expect(out.toString('utf8').trim()).toBe(`Authorization: Basic ${basic}`);
    const set = await runGit(['config', '--get', 'fetch.unpackLimit'], {
      config: [['fetch.unpackLimit', '1']],
    });
    expect(set.toString('utf8').trim()).toBe('1');
  });

  // A shell alias stands in for a hanging server: git starts a shell that starts sleep, like git starts
  // git-remote-http; the process-group kill must reach the grandchild too.
  const hang = (pidFile: string) => ['-c', `alias.hang=!echo $$ > ${pidFile}; exec sleep 30`, 'hang'];
  // Gone, or a zombie: the killed sleep's parent died with it, and PID 1 of a container may never reap it.
  const gone = async (pidFile: string) => {
    const pid = Number((await readFile(pidFile, 'utf8')).trim());
    for (let i = 0; i < 50; i++) {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
      if (stat === null || /^\d+ \(.*\) Z/.test(stat)) return true;
      await new Promise((r) => setTimeout(r, 20));
    }
    return false;
  };

  it('kills git and what it started when the signal aborts', async () => {
    const pidFile = path.join(dir, 'abort.pid');
    const controller = new AbortController();
    const running = runGit(hang(pidFile), { signal: controller.signal });
    for (let i = 0; i < 250; i++) {
      if (await readFile(pidFile, 'utf8').catch(() => '')) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    controller.abort(new Error('job timeout'));
    await expect(running).rejects.toMatchObject({
      kind: 'aborted',
      message: expect.stringMatching(/job timeout/),
    });
    expect(await gone(pidFile)).toBe(true);
  });

  it('kills git after timeoutMs with kind timeout', async () => {
    const pidFile = path.join(dir, 'timeout.pid');
    await expect(runGit(hang(pidFile), { timeoutMs: 300 })).rejects.toMatchObject({ kind: 'timeout' });
    expect(await gone(pidFile)).toBe(true);
  });

  it('keeps only the head of a flood on stderr', async () => {
    const flood = ['-c', "alias.flood=!head -c 1000000 /dev/zero | tr '\\\\0' x >&2; exit 3", 'flood'];
    const error = await runGit(flood).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GitError);
    expect((error as GitError).stderr.length).toBe(64 * 1024);
  });
});
