/**
 * The client's whole lifecycle end to end (issue 14): `atskills` from apps/cli against the hub listening on
 * 127.0.0.1 and real git over smart HTTP. Login checks the token, publishing is private unless --public,
 * saved and installed skills are listed, checked (one POST /v1/resolve, git ls-remote for gh: the hub does
 * not hold), updated with the conflict rule and removed; ATSKILLS_HUB in the reference client's form works.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseJsonOutput, runCliCaptured } from '../../../test/support/cli.js';
import { commitToRepo, createRepo } from '../../../test/support/corpus.js';
import { type GitServer, startGitServer } from '../../../test/support/git-server.js';
import { createTeam, createToken, createUser, OPERATOR } from '../src/services/auth/accounts.js';
import { createTestHub, type TestHub } from './support/app.js';

let hub: TestHub;
let git: GitServer;
let dir: string;
let project: string;
let origin: string;
let token: string;
let env: NodeJS.ProcessEnv;
let gitWork: string;
let hubRequests: string[] = [];

const skill = (name: string, description: string, body = `# ${name}\n`) =>
  `---\nname: ${name}\ndescription: ${description}\n---\n${body}`;

const cli = (...argv: string[]) => runCliCaptured(argv, { cwd: project, env });

async function writeTree(root: string, files: Record<string, string>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await writeFile(path.join(root, rel), content);
  }
}

beforeAll(async () => {
  hub = await createTestHub('cli_lifecycle');
  const op = { authority: OPERATOR, now: new Date(), requestId: 'test-setup' };
  await createUser(hub.db.db, { name: 'alice' }, op);
  await createTeam(hub.db.db, { name: 'acme', owner: 'alice' }, op);
  token = (await createToken(hub.db.db, { user: 'alice', scopes: ['read', 'publish'] }, op)).token;
  await hub.app.listen({ host: '127.0.0.1', port: 0 });
  hub.app.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    res.on('finish', () => hubRequests.push(`${req.method} ${(req.url ?? '').split('?')[0]}`));
  });
  origin = `http://127.0.0.1:${(hub.app.server.address() as AddressInfo).port}`;

  dir = await mkdtemp(path.join(tmpdir(), 'atskills-lifecycle-'));
  const repos = path.join(dir, 'repos');
  gitWork = (
    await createRepo(repos, 'octo/kit', {
      'skills/a/SKILL.md': skill('a', 'Skill a, one.'),
      'skills/b/SKILL.md': skill('b', 'Skill b.'),
    })
  ).workDir;
  git = await startGitServer({ root: repos });
  project = path.join(dir, 'project');
  await mkdir(path.join(project, '.atskills'), { recursive: true });
  env = {
    PATH: process.env.PATH,
    HOME: dir,
    XDG_CONFIG_HOME: path.join(dir, 'config'),
    ATSKILLS_CACHE: path.join(dir, 'cache'),
    ATSKILLS_GIT_BASE: git.baseUrl,
  };
  await writeTree(path.join(dir, 'collection'), {
    'deploy/SKILL.md': skill('deploy', 'Deploy the service.', '# Deploy\n\nv1\n'),
    'rollback/SKILL.md': skill('rollback', 'Roll back a release.'),
  });
});

afterAll(async () => {
  await hub?.close();
  git?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  hubRequests = [];
});

describe('account', () => {
  it('login checks the token with the hub (reference-client URL form accepted), whoami says who', async () => {
    const refused = await cli('login', '--hub', origin, '--token', 'atk_not-a-token');
    expect(refused.code).toBe(7);
    expect(refused.stderr).toContain('nothing was stored');

    const login = await cli('login', '--hub', `${origin}/api/skills`, '--token', token);
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toBe(
      `Logged in to ${origin} as alice, scopes: read, publish; namespaces: acme (owner), alice (owner)\n`,
    );
    const stored = JSON.parse(await readFile(path.join(dir, 'config', 'atskills', 'config.json'), 'utf8'));
    expect(stored).toEqual({ hub: origin, token });

    const me = parseJsonOutput(await cli('whoami', '--json'));
    expect(me).toMatchObject({ hub: origin, user: 'alice', scopes: ['read', 'publish'] });
  });
});

describe('publishing', () => {
  it('is private unless --public, and says so in words before uploading', async () => {
    const dry = await cli('publish', path.join(dir, 'collection'), '--to', 'hub:acme/playbooks', '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toContain('private: only members of acme can see it');
    expect(hubRequests).toEqual([]);

    const published = await cli('publish', path.join(dir, 'collection'), '--to', 'hub:acme/playbooks');
    expect(published.code, published.stderr).toBe(0);
    expect(published.stdout).toMatch(/^Published hub:acme\/playbooks at revision /);
    const anonymous = await hub.app.inject({ method: 'GET', url: '/v1/skills/hub:acme/playbooks/deploy' });
    expect(anonymous.statusCode).toBe(404);

    const loud = await cli(
      'publish',
      path.join(dir, 'collection'),
      '--to',
      'hub:acme/open',
      '--public',
      '--dry-run',
    );
    expect(loud.stderr).toContain('PUBLIC: anyone can find and read it');
  });

  it('publishes @scope and colon folders and cased file names under exactly their paths', async () => {
    const odd = path.join(dir, 'odd');
    await writeTree(odd, {
      '@scope/zeta/SKILL.md': skill('zeta', 'Scoped.'),
      'a:b/delta/SKILL.md': skill('delta', 'Colon folder.'),
      'deploy/SKILL.md': skill('deploy', 'Cased files.'),
      'deploy/REFERENCE.md': '# Reference\n',
      'deploy/Scripts/Run.py': 'print("run")\n',
    });
    const published = await cli('publish', odd, '--to', 'hub:alice/odd', '--public', '--json');
    expect(published.code, published.stderr).toBe(0);
    expect(parseJsonOutput<{ skills: string[] }>(published).skills.sort()).toEqual([
      'hub:alice/odd/@scope/zeta',
      'hub:alice/odd/a:b/delta',
      'hub:alice/odd/deploy',
    ]);
    const body = async (url: string) => {
      const res = await hub.app.inject({ method: 'GET', url });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
      return res.body;
    };
    expect(await body('/api/skills/alice/odd/a:b/delta')).toBe(skill('delta', 'Colon folder.'));
    expect(await body('/api/skills/alice/odd/@scope/zeta/SKILL.md')).toBe(skill('zeta', 'Scoped.'));
    expect(await body('/api/skills/alice/odd/deploy/REFERENCE.md')).toBe('# Reference\n');
    expect(await body('/api/skills/alice/odd/deploy/Scripts/Run.py')).toBe('print("run")\n');
  });

  it('search takes the API filters and pages with the cursor', async () => {
    const page = parseJsonOutput<{ results: { identity: string }[]; nextCursor: string | null }>(
      await cli(
        'search',
        '--json',
        '--source',
        'hub',
        '--namespace',
        'acme',
        '--limit',
        '1',
        'roll back release',
      ),
    );
    expect(page.results.map((r) => r.identity)).toEqual(['hub:acme/playbooks/rollback']);
    const none = parseJsonOutput<{ results: unknown[] }>(
      await cli('search', '--json', '--namespace', 'nobody', 'roll back release'),
    );
    expect(none.results).toEqual([]);
    expect((await cli('search', '--limit', '500', 'x')).code).toBe(2);
  });
});

describe('the project lifecycle', () => {
  it('saves and installs, then lists everything with revision, date, edited and installed', async () => {
    // From here on the reference client's form of ATSKILLS_HUB.
    env = { ...env, ATSKILLS_HUB: `${origin}/api/skills` };
    for (const id of ['hub:acme/playbooks/deploy', 'gh:octo/kit/skills/a']) {
      const saved = await cli('save', id);
      expect(saved.code, saved.stderr).toBe(0);
    }
    const folder = await cli('install', 'hub:acme/playbooks');
    expect(folder.stdout).toBe(
      'Installed: @hub:acme/playbooks/\n  follows 2 skills: hub:acme/playbooks/deploy, hub:acme/playbooks/rollback\n',
    );
    expect((await cli('install', 'gh:octo/kit/skills/b')).code).toBe(0);

    const list = parseJsonOutput<{
      saved: {
        identity: string;
        edited: boolean | null;
        installed: boolean;
        revision: string;
        savedAt: string;
      }[];
      autotrigger: { lines: { text: string }[] };
    }>(await cli('list', '--json'));
    const today = new Date().toISOString().slice(0, 10);
    expect(list.saved.map((s) => [s.identity, s.edited, s.installed, s.savedAt])).toEqual([
      ['gh:octo/kit/skills/a', false, false, today],
      ['hub:acme/playbooks/deploy', false, true, today],
    ]);
    expect(list.autotrigger.lines.map((l) => l.text)).toEqual([
      '@hub:acme/playbooks/',
      '@gh:octo/kit/skills/b',
    ]);
    const text = await cli('list');
    expect(text.stdout).toContain('hub:acme/playbooks/deploy  rev ');
    expect(text.stdout).toContain('unedited  installed');

    const prompt = await cli('prompt');
    expect(prompt.stdout).toBe(
      '- deploy: Deploy the service. (hub:acme/playbooks/deploy)\n- rollback: Roll back a release. (hub:acme/playbooks/rollback)\n- b: Skill b. (gh:octo/kit/skills/b)\n',
    );
  });

  it('outdated: everything current, one POST /v1/resolve, exit 0', async () => {
    const result = await cli('outdated', '--json');
    expect(result.code, result.stdout).toBe(0);
    const report = parseJsonOutput<{ items: { identity: string; status: string; via: string }[] }>(result);
    expect(report.items.map((i) => [i.identity, i.status, i.via])).toEqual([
      ['gh:octo/kit/skills/a', 'up-to-date', 'git'],
      ['hub:acme/playbooks/deploy', 'up-to-date', 'hub'],
      ['hub:acme/playbooks', 'up-to-date', 'hub'],
      ['gh:octo/kit/skills/b', 'up-to-date', 'git'],
    ]);
    expect(hubRequests).toEqual(['POST /v1/resolve']);
  });

  it('outdated after upstream changes: exit 8 naming what changed', async () => {
    await writeTree(path.join(dir, 'collection'), {
      'deploy/SKILL.md': skill('deploy', 'Deploy the service.', '# Deploy\n\nv2\n'),
    });
    expect((await cli('publish', path.join(dir, 'collection'), '--to', 'hub:acme/playbooks')).code).toBe(0);
    await commitToRepo(gitWork, { 'skills/a/SKILL.md': skill('a', 'Skill a, two.') });
    const result = await cli('outdated');
    expect(result.code, result.stdout).toBe(8);
    expect(result.stdout).toMatch(/^outdated {4}gh:octo\/kit\/skills\/a {2}\[saved\]/m);
    expect(result.stdout).toMatch(/^outdated {4}hub:acme\/playbooks\/deploy {2}\[saved, installed\]/m);
    expect(result.stdout).toContain('Run `atskills update --all`');
  });

  it('update: untouched copies refreshed, an edited one is a conflict left as it is, with a summary', async () => {
    const edited = path.join(project, '.atskills/gh/octo/kit/skills/a/SKILL.md');
    await writeFile(edited, skill('a', 'Skill a, my edit.'));
    const result = await cli('update', '--all');
    expect(result.code).toBe(6);
    expect(result.stdout).toContain('updated     hub:acme/playbooks/deploy');
    expect(result.stdout).toMatch(
      /conflict {4}gh:octo\/kit\/skills\/a: was edited since it was saved at \w+ \(SKILL\.md\); left as it is/,
    );
    expect(result.stdout).toContain('1 updated, 0 up to date, 1 conflicts, 0 failed.');
    expect(await readFile(edited, 'utf8')).toBe(skill('a', 'Skill a, my edit.'));
    const deploy = await readFile(path.join(project, '.atskills/hub/acme/playbooks/deploy/SKILL.md'), 'utf8');
    expect(deploy).toContain('v2');
    expect((await cli('update', 'hub:acme/playbooks/rollback')).code).toBe(3);
    // No identity means every saved skill, as --all: the edited copy is still a conflict, deploy is current.
    const all = await cli('update');
    expect(all.code).toBe(6);
    expect(all.stdout).toContain('0 updated, 1 up to date, 1 conflicts, 0 failed.');
  });

  it('remove: refuses an edited copy unless --force, removes the copy and its line', async () => {
    const refused = await cli('remove', 'gh:octo/kit/skills/a');
    expect(refused.code).toBe(6);
    expect(refused.stderr).toContain('nothing was removed');
    expect(refused.stderr.split('gh:octo/kit/skills/a').length - 1).toBe(1);
    const forced = await cli('remove', '--force', 'gh:octo/kit/skills/a');
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toBe('Removed .atskills/gh/octo/kit/skills/a\n');

    const installed = await cli('remove', 'gh:octo/kit/skills/b');
    expect(installed.stdout).toBe('Uninstalled: @gh:octo/kit/skills/b\n');
    const gone = await cli('remove', 'gh:octo/kit/skills/b');
    expect(gone.code).toBe(3);

    const list = parseJsonOutput<{
      saved: { identity: string }[];
      autotrigger: { lines: { text: string }[] };
    }>(await cli('list', '--json'));
    expect(list.saved.map((s) => s.identity)).toEqual(['hub:acme/playbooks/deploy']);
    expect(list.autotrigger.lines.map((l) => l.text)).toEqual(['@hub:acme/playbooks/']);
  });

  it('logout forgets the token; whoami then says how to log in', async () => {
    expect((await cli('logout')).stdout).toContain('the token was removed');
    const who = await cli('whoami');
    expect(who.code).toBe(7);
    expect(who.stderr).toContain('atskills login --hub');
  });
});
