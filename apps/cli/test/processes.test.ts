// Real processes against one cache: two clients resolving the same identity at once, and a client killed
// (SIGKILL, with its git children) in the middle of a fetch. Pass/fail never depends on timing: whatever
// moment the kill lands, the cache must hold either nothing or a complete entry.
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { clientCache, loadSettings } from '@atskills/protocol/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJsonOutput, runCliCaptured, spawnCli } from '../../../test/support/cli.js';
import { createRepo } from '../../../test/support/corpus.js';
import { type GitServer, startGitServer } from '../../../test/support/git-server.js';

const SKILL = '---\nname: busy\ndescription: Resolved by many at once.\n---\nbusy body\n';
let server: GitServer;
let base: string;

async function setup() {
  const dir = await mkdtemp(path.join(base, 'run-'));
  const cwd = path.join(dir, 'project');
  await mkdir(cwd, { recursive: true });
  const cacheDir = path.join(dir, 'cache');
  return {
    cwd,
    cacheDir,
    env: { ...process.env, ATSKILLS_CACHE: cacheDir, ATSKILLS_GIT_BASE: server.baseUrl },
  };
}

beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'atskills-processes-'));
  const root = path.join(base, 'repos');
  await createRepo(root, 'acme/busy', {
    'skills/busy/SKILL.md': SKILL,
    'skills/busy/data.txt': 'x'.repeat(10_000),
  });
  server = await startGitServer({ root });
});
afterAll(() => server?.close());

describe('the cache under concurrent and killed clients', () => {
  it('lets two processes resolve the same identity at once', async () => {
    const { cwd, cacheDir, env } = await setup();
    const identity = 'gh:acme/busy/skills/busy';
    const [a, b] = await Promise.all([
      spawnCli(['get', '--json', identity], { cwd, env }).done,
      spawnCli(['get', '--json', identity], { cwd, env }).done,
    ]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    const ja = parseJsonOutput(a);
    const jb = parseJsonOutput(b);
    expect(ja).toMatchObject({ kind: 'skill', body: 'busy body\n', stale: false });
    expect(jb).toEqual(ja);
    expect(await readFile(path.join(ja.dir as string, 'SKILL.md'), 'utf8')).toBe(SKILL);
    const cache = clientCache(loadSettings(env));
    expect((await cache.list()).map((e) => e.identity)).toEqual([identity]);
    expect(await readdir(path.join(cacheDir, 'tmp'))).toEqual([]);
  });

  it('survives a client killed mid-fetch: no half-written entry, and the next resolve works', async () => {
    const { cwd, cacheDir, env } = await setup();
    const identity = 'gh:acme/busy/skills/busy';
    server.resetLog();
    server.setDelay(400);
    const { child, done } = spawnCli(['get', '--json', identity], { cwd, env, detached: true });
    try {
      // The request is logged before the server's delay: once a pack fetch is logged, the client is mid-fetch.
      await waitFor(() => server.log.some((r) => r.command === 'fetch'));
      process.kill(-(child.pid as number), 'SIGKILL');
      await done;
    } finally {
      server.setDelay(0);
    }
    const cache = clientCache(loadSettings(env));
    const entry = await cache.read(identity);
    if (entry) {
      // The kill landed after the entry was complete: then it must be whole.
      expect(await readFile(path.join(entry.dir as string, 'SKILL.md'), 'utf8')).toBe(SKILL);
    } else {
      expect(existsSync(path.join(cache.entryDir(identity), 'entry.json'))).toBe(false);
    }
    const again = await runCliCaptured(['get', '--json', identity], { cwd, env });
    expect(again.code, `${again.stderr}${again.stdout}`).toBe(0);
    expect(parseJsonOutput(again)).toMatchObject({ kind: 'skill', body: 'busy body\n', stale: false });
    // The dead client's work folder was cleaned up by the next client.
    expect(await readdir(path.join(cacheDir, 'tmp'))).toEqual([]);
  });
});

/** Polls a condition (the assertion does not depend on how long it takes, only that it happens). */
async function waitFor(condition: () => boolean, timeoutMs = 50_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('a closed pipe', () => {
  it('ends the run quietly when the reader of stdout goes away (atskills ... | head)', async () => {
    const { cwd, env } = await setup();
    // ~1 MB of output, far past a pipe's buffer, so writes are still pending when the reader closes.
    const words = Array.from({ length: 20_000 }, (_, i) => `@skills:gh:acme/busy/skills/s${i}`);
    const { child, done } = spawnCli(['refs', ...words], { cwd, env });
    child.stdout?.once('data', () => child.stdout?.destroy());
    const result = await done;
    expect(result.stderr).not.toMatch(/EPIPE|Error|at .*\.js/);
    expect(result.code).toBe(0);
  });
});
