// The CLI's surface without git: refs over the conformance vectors, help and exit codes, login, and search
// and publish against a tiny in-test hub.
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJsonOutput, runCliCaptured } from '../../../test/support/cli.js';
import { repoRoot } from '../../../test/support/corpus.js';

const vectors = JSON.parse(
  readFileSync(path.join(repoRoot, '..', 'shared', 'conformance', 'references.json'), 'utf8'),
) as {
  cases: { message: string; refs?: unknown[]; error?: string }[];
};

let dir: string;
let env: NodeJS.ProcessEnv;
const cli = (argv: string[], stdin?: string) =>
  runCliCaptured(argv, { cwd: dir, env, ...(stdin !== undefined ? { stdin } : {}) });

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'atskills-basics-'));
  env = {
    PATH: process.env.PATH,
    HOME: dir,
    XDG_CONFIG_HOME: path.join(dir, 'config'),
    ATSKILLS_CACHE: path.join(dir, 'cache'),
  };
});

describe('refs', () => {
  it.each(vectors.cases.map((c) => [c.message, c] as const))(
    'matches references.json for %j',
    async (_m, vector) => {
      const result = await cli(['refs', '--json', vector.message]);
      if (vector.error) {
        expect(result.code).toBe(2);
        expect(parseJsonOutput<{ error: { code: string; message: string } }>(result).error).toMatchObject({
          code: vector.error,
          message: expect.any(String),
        });
      } else {
        expect(result.code).toBe(0);
        expect(parseJsonOutput(result)).toEqual({ refs: vector.refs });
      }
    },
  );
});

describe('help and exit codes', () => {
  const commands = [
    'refs',
    'get',
    'expand',
    'save',
    'install',
    'uninstall',
    'triggers',
    'prompt',
    'cache',
    'cache ls',
    'cache clear',
    'login',
    'search',
    'publish',
    'list',
    'outdated',
    'update',
    'remove',
    'whoami',
    'logout',
  ];
  it.each(commands)('atskills %s --help', async (command) => {
    const result = await cli([...command.split(' '), '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Usage: atskills ${command}`);
  });

  it('documents the exit codes and refuses bad usage with 2', async () => {
    expect((await cli(['--help'])).stdout).toMatch(/Exit codes:[\s\S]*5 over the menu cap/);
    expect((await cli([])).code).toBe(2);
    expect((await cli(['nope'])).code).toBe(2);
    expect((await cli(['get'])).code).toBe(2);
    expect((await cli(['save', '--on-conflict', 'maybe', 'gh:o/r/p'])).code).toBe(2);
    const bad = await cli(['get', '--json', 'gh:o/r/../x']);
    expect(bad.code).toBe(2);
    expect(parseJsonOutput<{ error: { code: string } }>(bad).error.code).toBe('dot-segment');
  });

  it('lists and clears an empty cache', async () => {
    expect(parseJsonOutput(await cli(['cache', 'ls', '--json']))).toEqual({
      dir: path.join(dir, 'cache'),
      entries: [],
    });
    expect((await cli(['cache', 'clear'])).stdout).toMatch(/^Removed 0 cached entries/);
  });
});

describe('hub commands', () => {
  let hub: Server;
  let hubUrl: string;
  const received: { method: string; url: string; authorization?: string; body: Buffer }[] = [];

  beforeAll(async () => {
    hub = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const hit = {
        method: req.method ?? '',
        url: req.url ?? '',
        body: Buffer.concat(chunks),
        ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
      };
      received.push(hit);
      res.setHeader('content-type', 'application/json');
      if (req.url?.startsWith('/v1/search')) {
        const q = new URL(req.url, 'http://x').searchParams.get('q');
        return res.end(
          JSON.stringify({
            results: [
              {
                identity: 'hub:acme/tools/deploy',
                reference: '@skills:hub:acme/tools/deploy',
                name: 'deploy',
                description: `Deploy (${q}).`,
                source: 'hub',
                repository: 'acme/tools',
                path: 'deploy',
                revision: 'r1',
                popularity: 3,
                descriptionTokens: 4,
                flags: [],
              },
            ],
            nextCursor: null,
          }),
        );
      }
      if (req.url === '/admin/me' && req.headers.authorization === 'Bearer tok-1')
        return res.end(
          JSON.stringify({ user: 'alice', admin: false, scopes: ['read', 'publish'], namespaces: [] }),
        );
      if (req.method === 'PUT' && req.headers.authorization === 'Bearer tok-1')
        // The hub's PublishResponse (packages/protocol http.ts), which the CLI validates.
        return res.end(
          JSON.stringify({
            identity: 'hub:acme/playbooks',
            revision: 'rev-42',
            previousRevision: null,
            unchanged: false,
            visibility: 'private',
            skills: ['hub:acme/playbooks/deploy', 'hub:acme/playbooks/ops/review'],
            warnings: [],
          }),
        );
      res.statusCode = 401;
      res.setHeader('content-type', 'application/problem+json');
      res.end(
        JSON.stringify({
          type: 'about:blank',
          title: 'Unauthorized',
          status: 401,
          code: 'unauthorized',
          detail: 'bad token',
        }),
      );
    });
    await new Promise<void>((r) => hub.listen(0, '127.0.0.1', r));
    hubUrl = `http://127.0.0.1:${(hub.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => hub.close(() => r())));

  it('logs in with a token from stdin and stores it with mode 0600', async () => {
    const result = await cli(['login', '--hub', hubUrl], 'tok-1\n');
    expect(result.code, result.stderr).toBe(0);
    const file = path.join(dir, 'config', 'atskills', 'config.json');
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ hub: hubUrl, token: 'tok-1' });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(result.stdout).toBe(`Logged in to ${hubUrl} as alice, scopes: read, publish\n`);
    // The hub is asked first: a token it refuses is never stored.
    const refused = await cli(['login', '--hub', `${hubUrl}/api/skills`, '--token', 'typo']);
    expect(refused.code).toBe(7);
    expect(refused.stderr).toContain('refused this token (401); nothing was stored');
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ hub: hubUrl, token: 'tok-1' });
    expect((await cli(['login', '--hub', 'not a url', '--token', 'x'])).code).toBe(2);
    expect((await cli(['login', '--hub', hubUrl], '')).code).toBe(2);
  });

  it('searches the hub it logged in to', async () => {
    await cli(['login', '--hub', hubUrl, '--token', 'tok-1']);
    const result = await cli(['search', 'roll', 'back']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('@skills:hub:acme/tools/deploy');
    expect(result.stdout).toContain('Deploy (roll back).');
    expect(received.at(-1)?.url).toBe('/v1/search?q=roll+back&limit=20');
  });

  it('publishes a folder packed by the leaf rule, and refuses invalid skills and missing access', async () => {
    await cli(['login', '--hub', hubUrl, '--token', 'tok-1']);
    const src = path.join(dir, 'collection');
    const files: Record<string, string> = {
      'deploy/SKILL.md': '---\nname: deploy\ndescription: Deploy.\n---\nbody\n',
      'deploy/run.sh': 'echo hi\n',
      'ops/review/SKILL.md': '---\nname: review\ndescription: Review.\n---\nbody\n',
      'notes.txt': 'not in any skill\n',
    };
    for (const [rel, content] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(src, rel)), { recursive: true });
      await writeFile(path.join(src, rel), content);
    }
    const result = await cli(['publish', src, '--to', 'hub:Acme/Playbooks', '--private']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('Published hub:acme/playbooks at revision rev-42\n');
    expect(result.stderr).toContain('Publishing 2 skills (3 files');
    const put = received.at(-1)!;
    expect(put).toMatchObject({
      method: 'PUT',
      url: '/v1/collections/acme/playbooks?visibility=private',
      authorization: 'Bearer tok-1',
    });
    const tarText = gunzipSync(put.body).toString('latin1');
    for (const p of ['deploy/SKILL.md', 'deploy/run.sh', 'ops/review/SKILL.md']) expect(tarText).toContain(p);
    expect(tarText).not.toContain('notes.txt');

    expect((await cli(['publish', src, '--to', 'hub:acme/playbooks/sub'])).code).toBe(2);
    await writeFile(
      path.join(src, 'ops/review/SKILL.md'),
      '---\nname: Not Valid\ndescription: Review.\n---\n',
    );
    const invalid = await cli(['publish', src, '--to', 'hub:acme/playbooks']);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/ops\/review\/SKILL\.md: .*\[name-format\]/);
    await writeFile(path.join(src, 'ops/review/SKILL.md'), '---\nname: review\ndescription: Review.\n---\n');
    const denied = await runCliCaptured(['publish', src, '--to', 'hub:acme/playbooks'], {
      cwd: dir,
      env: { ...env, ATSKILLS_TOKEN: 'wrong' },
    });
    expect(denied.code).toBe(7);
    expect(denied.stderr).toContain('bad token');
  });
});
