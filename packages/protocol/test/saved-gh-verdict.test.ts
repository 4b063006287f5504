// A `gh:` skill saved over git carries the hub's current verdict on the folder it saved (SPEC 2.8): git
// knows no verdicts, the hub keys them by the folder's tree sha, which the cache holds for the saved commit,
// and which the copy itself gives (hashed as git does) once the cache has moved past that commit.
// Real git over smart HTTP; the hub is a small stand-in answering POST /v1/resolve and HEAD ?rev=.
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitToRepo, createRepo } from '../../../test/support/corpus.js';
import { type GitServer, startGitServer } from '../../../test/support/git-server.js';
import { gitTreeSha, Resolver } from '../src/node/resolver.js';
import { saveSkill } from '../src/node/save.js';
import { loadSettings } from '../src/node/settings.js';

const SKILL = 'gh:octo/kit/skills/a';

let git: GitServer;
let hub: Server;
let hubUrl: string;
let tree: string;
let workDir: string;
/** The hub's flags on the folder at `tree`. */
let verdict: string[] = [];
const asked: string[] = [];

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

beforeAll(async () => {
  const root = await mkdtemp(path.join(tmpdir(), 'atskills-gh-verdict-'));
  ({ workDir } = await createRepo(root, 'octo/kit', {
    'skills/a/SKILL.md': '---\nname: a\ndescription: Skill a.\n---\nbody of a\n',
    'skills/a/scripts/run.sh': 'echo a\n',
    'skills/a/a.b/x.md': 'x\n',
  }));
  // An executable script: its mode is part of the folder's tree sha.
  await chmod(path.join(workDir, 'skills/a/scripts/run.sh'), 0o755);
  await commitToRepo(workDir, {}, 'executable');
  tree = execFileSync('git', ['rev-parse', 'HEAD:skills/a'], { cwd: workDir }).toString().trim();
  git = await startGitServer({ root });
  hub = createServer((req, res) => {
    const url = decodeURIComponent(req.url ?? '');
    asked.push(`${req.method} ${url}`);
    if (req.method === 'POST' && url === '/v1/resolve') {
      void bodyOf(req).then((text) => {
        const { items } = JSON.parse(text) as { items: { identity: string; revision?: string }[] };
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            items: items.map(({ identity, revision }) =>
              identity === SKILL && revision === tree
                ? { identity, status: 'unchanged', revision, flags: verdict }
                : { identity, status: 'not-found' },
            ),
          }),
        );
      });
      return;
    }
    if (req.method === 'HEAD' && url === `/v1/skills/${SKILL}?rev=${tree}`) {
      res.writeHead(200, verdict.length ? { 'x-skill-flags': verdict.join(', ') } : {}).end();
      return;
    }
    res.writeHead(404, { 'content-type': 'application/problem+json' }).end('{}');
  });
  await new Promise<void>((r) => hub.listen(0, '127.0.0.1', r));
  hubUrl = `http://127.0.0.1:${(hub.address() as AddressInfo).port}`;
});

afterAll(async () => {
  git?.close();
  await new Promise<void>((r) => hub.close(() => r()));
});

describe('a gh: skill saved over git', () => {
  it('is read with the verdict the hub names now for the saved folder, alone or in a batch', async () => {
    const projectDir = await mkdtemp(path.join(tmpdir(), 'atskills-gh-verdict-project-'));
    const settings = loadSettings({
      ATSKILLS_CACHE: path.join(projectDir, 'cache'),
      ATSKILLS_GIT_BASE: git.baseUrl,
      ATSKILLS_HUB: hubUrl,
      HOME: projectDir,
    });
    expect((await saveSkill(new Resolver(settings), SKILL, { projectDir })).action).toBe('saved');
    verdict = ['reported-malicious'];

    git.resetLog();
    asked.length = 0;
    expect(await new Resolver(settings).resolve(SKILL, { projectDir })).toMatchObject({
      origin: 'local',
      flags: ['reported-malicious'],
    });
    expect(asked).toEqual([`HEAD /v1/skills/${SKILL}?rev=${tree}`]);
    expect(git.log).toEqual([]); // the copy is read locally: git is not asked

    asked.length = 0;
    const hook = new Resolver(settings);
    const deadline = Date.now() + 1500;
    void hook.probeBatch([SKILL], { deadline, projectDir });
    expect((await hook.resolve(SKILL, { projectDir, deadline })).flags).toEqual(['reported-malicious']);
    expect(asked).toEqual(['POST /v1/resolve']);
  });

  it('reads as unchecked, not as "none", when no hub ever named its flags', async () => {
    const projectDir = await mkdtemp(path.join(tmpdir(), 'atskills-gh-verdict-unheard-'));
    // A hub that is not there: the fetch over git records no flags, and the copy's verdict is unknown.
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const nowhere = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((r) => closed.close(() => r()));
    const settings = loadSettings({
      ATSKILLS_CACHE: path.join(projectDir, 'cache'),
      ATSKILLS_GIT_BASE: git.baseUrl,
      ATSKILLS_HUB: nowhere,
      HOME: projectDir,
    });
    expect((await saveSkill(new Resolver(settings), SKILL, { projectDir })).action).toBe('saved');
    const copy = await new Resolver(settings).resolve(SKILL, { projectDir });
    expect(copy).toMatchObject({ origin: 'local', flags: [] });
    expect(copy.kind === 'skill' && copy.verdictUnchecked).toMatch(/could not be checked/);
  });

  it('is asked about by its own tree sha once the cache no longer holds the saved commit', async () => {
    const projectDir = await mkdtemp(path.join(tmpdir(), 'atskills-gh-verdict-moved-'));
    const env = {
      ATSKILLS_CACHE: path.join(projectDir, 'cache'),
      ATSKILLS_GIT_BASE: git.baseUrl,
      HOME: projectDir,
    };
    const settings = loadSettings({ ...env, ATSKILLS_HUB: hubUrl });
    verdict = [];
    expect((await saveSkill(new Resolver(settings), SKILL, { projectDir })).action).toBe('saved');
    // Upstream changes the skill twice, and the machine follows (another project, a plain `get`): the cache
    // now holds two later commits and neither is the saved one.
    for (const n of [2, 3]) {
      await commitToRepo(workDir, {
        'skills/a/SKILL.md': `---\nname: a\ndescription: Skill a.\n---\nbody ${n}\n`,
      });
      await new Resolver(settings).resolve(SKILL, { projectDir, skipLocal: true });
    }
    verdict = ['reported-malicious'];
    asked.length = 0;
    expect(await new Resolver(settings).resolve(SKILL, { projectDir })).toMatchObject({
      origin: 'local',
      flags: ['reported-malicious'],
    });
    expect(asked).toEqual([`HEAD /v1/skills/${SKILL}?rev=${tree}`]);
    // The verdict is kept under that tree: the hub gone, it still stands.
    const down = loadSettings({ ...env, ATSKILLS_HUB: 'http://127.0.0.1:9' });
    expect((await new Resolver(down).resolve(SKILL, { projectDir })).flags).toEqual(['reported-malicious']);
  });

  it("hashes a folder as git does (file modes, symlinks, a folder's name ordered as if it ended in /)", async () => {
    for (const format of ['sha1', 'sha256'] as const) {
      const dir = await mkdtemp(path.join(tmpdir(), 'atskills-tree-sha-'));
      await mkdir(path.join(dir, 'a/b'), { recursive: true });
      await mkdir(path.join(dir, 'empty'));
      await writeFile(path.join(dir, 'a/b/deep.md'), 'deep\n');
      await writeFile(path.join(dir, 'a.txt'), 'dot\n');
      await writeFile(path.join(dir, 'a-b'), 'dash\n');
      await writeFile(path.join(dir, 'é.md'), 'accent\n');
      await writeFile(path.join(dir, 'run.sh'), 'echo\n');
      await chmod(path.join(dir, 'run.sh'), 0o755);
      await symlink('a.txt', path.join(dir, 'link'));
      await writeFile(path.join(dir, '.source'), 'gh:o/r/s\n2026-01-01 rev:x\n');
      const expected = (gitDir: string) => {
        const run = (args: string[]) => execFileSync('git', args, { cwd: gitDir }).toString().trim();
        run(['init', '-q', `--object-format=${format}`]);
        run(['add', '-A', '--', '.', ':!.source']);
        return run(['write-tree']);
      };
      const sha = gitTreeSha(dir, format, ['.source']);
      expect(sha).toBe(expected(dir));
    }
  });
});
