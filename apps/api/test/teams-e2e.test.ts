/**
 * The Teams flow end to end (issue 5, "Done when"), against the hub listening on 127.0.0.1: accounts made
 * with the admin CLI, bob logs in and publishes a private collection with `atskills publish`, carol resolves,
 * saves and installs it from another machine (one 304 per later use), bob's change reaches her, and an
 * outsider (eve) or an anonymous caller finds no trace of it in get, search or stats.
 */
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skillMd } from '../../../test/fixtures/archives/make.js';
import { type CliResult, runCliCaptured } from '../../../test/support/cli.js';
import { runCli as runHubCli } from '../src/cli.js';
import { createTestHub, type TestHub } from './support/app.js';

let hub: TestHub;
let hubUrl: string;
let root: string;
/** Every request the listening app answered, in order. */
let requests: { method: string; url: string; status: number }[] = [];
const tokens: Record<'bob' | 'carol' | 'eve', string> = { bob: '', carol: '', eve: '' };

/**
 * One person's machine: own home, XDG dirs and cache; `project` is a plain working folder (cloud identities
 * resolve through the cache), `repo` the project carol saves into (a saved copy answers its own address,
 * SPEC 1.4, so it is kept apart from the folder where `get` must reach the hub).
 */
interface Machine {
  env: NodeJS.ProcessEnv;
  project: string;
  repo: string;
}
const machines: Record<'bob' | 'carol' | 'eve' | 'anonymous', Machine> = {} as never;

/** `npm run hub -- admin ...` through the CLI's own entry, against the test database. */
async function admin(...argv: string[]): Promise<string> {
  let stdout = '';
  let stderr = '';
  const code = await runHubCli(['admin', ...argv], {
    database: hub.db,
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
  });
  expect(code, stderr).toBe(0);
  return stdout;
}

async function newMachine(name: string): Promise<Machine> {
  const home = path.join(root, name);
  const project = path.join(home, 'project');
  const repo = path.join(home, 'repo');
  await mkdir(project, { recursive: true });
  await mkdir(repo, { recursive: true });
  return {
    project,
    repo,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, 'config'),
      XDG_CACHE_HOME: path.join(home, 'xdg-cache'),
      XDG_DATA_HOME: path.join(home, 'data'),
      ATSKILLS_CACHE: path.join(home, 'cache'),
      // Nothing here may reach for git.
      ATSKILLS_GIT_BASE: 'http://127.0.0.1:1',
    },
  };
}

const atskills = (who: keyof typeof machines, ...argv: string[]): Promise<CliResult> =>
  runCliCaptured(argv, { cwd: machines[who].project, env: machines[who].env });
/** carol, working in her repo. */
const inCarolsRepo = (...argv: string[]): Promise<CliResult> =>
  runCliCaptured(argv, { cwd: machines.carol.repo, env: machines.carol.env });

/** Requests since the last call, as [path without query, status]. */
function takeRequests(): [string, number][] {
  const taken = requests.map((r): [string, number] => [r.url.split('?')[0] ?? '', r.status]);
  requests = [];
  return taken;
}

const playbooks = (deployBody: string) => ({
  'deploy/SKILL.md': skillMd('deploy', 'Deploy the acme service.', deployBody),
  'deploy/checklist.md': '- drain the pool\n- ship\n',
  'rollback/SKILL.md': skillMd('rollback', 'Roll back an acme release.'),
});

async function writeFolder(dir: string, files: Record<string, string>): Promise<void> {
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), content);
  }
}

const revisionOf = (r: CliResult) => r.stdout.match(/ revision ([0-9a-f]{64})/)?.[1];
const stats = async (token?: string) => {
  const res = await fetch(`${hubUrl}/v1/stats`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as Record<string, unknown>;
  return {
    skills: body.skills,
    collections: body.collections,
    repositories: body.repositories,
    gone: body.gone,
  };
};

let folder: string;
let statsBeforeAcme: Awaited<ReturnType<typeof stats>>;
let firstRevision: string;

beforeAll(async () => {
  hub = await createTestHub('teams_e2e');
  await hub.app.listen({ host: '127.0.0.1', port: 0 });
  hubUrl = `http://127.0.0.1:${(hub.app.server.address() as AddressInfo).port}`;
  hub.app.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    res.on('finish', () =>
      requests.push({ method: req.method ?? '', url: req.url ?? '', status: res.statusCode }),
    );
  });
  root = await mkdtemp(path.join(tmpdir(), 'atskills-teams-e2e-'));
  for (const who of ['bob', 'carol', 'eve', 'anonymous'] as const) machines[who] = await newMachine(who);
  // The anonymous caller never logs in; it only knows where the hub is.
  machines.anonymous.env.ATSKILLS_HUB = hubUrl;
  folder = path.join(machines.bob.project, 'playbooks');
}, 60_000);

afterAll(async () => {
  await hub?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

describe('the Teams flow, end to end', () => {
  it('bootstraps accounts and tokens with the admin CLI', async () => {
    for (const user of ['alice', 'bob', 'carol', 'eve']) await admin('create-user', user);
    await admin('create-team', 'acme', '--owner', 'alice');
    await admin('add-member', 'acme', 'bob', '--role', 'publisher');
    await admin('add-member', 'acme', 'carol', '--role', 'reader');
    await admin('create-team', 'rivals', '--owner', 'eve');
    const token = async (user: string, scopes: string) =>
      (JSON.parse(await admin('create-token', user, '--scopes', scopes, '--json')) as { token: string })
        .token;
    tokens.bob = await token('bob', 'read,publish');
    tokens.carol = await token('carol', 'read');
    tokens.eve = await token('eve', 'read,publish');
    for (const t of Object.values(tokens)) expect(t).toMatch(/^ask_[0-9A-Za-z]{43}$/);
    const members = JSON.parse(await admin('list-members', 'acme', '--json')) as { user: string }[];
    expect(members.map((m) => m.user).sort()).toEqual(['alice', 'bob', 'carol']);
  });

  it('eve has a public skill of her own, so search and stats below are not empty by accident', async () => {
    const login = await atskills('eve', 'login', '--hub', hubUrl, '--token', tokens.eve);
    expect(login.code, login.stderr).toBe(0);
    const evesFolder = path.join(machines.eve.project, 'tools');
    await writeFolder(evesFolder, {
      'deploy-helper/SKILL.md': skillMd('deploy-helper', 'Help deploy rival services.'),
    });
    // A public collection has to be asked for: the CLI publishes privately by default, like the API.
    const res = await atskills('eve', 'publish', evesFolder, '--to', 'hub:rivals/tools', '--public');
    expect(res.code, res.stderr).toBe(0);
    statsBeforeAcme = await stats();
    expect(statsBeforeAcme.skills).toBeGreaterThan(0);
  });

  it('bob logs in (config mode 0600) and publishes a private collection; identical content is no new revision', async () => {
    const login = await atskills('bob', 'login', '--hub', hubUrl, '--token', tokens.bob);
    expect(login.code, login.stderr).toBe(0);
    const configFile = path.join(machines.bob.env.XDG_CONFIG_HOME as string, 'atskills', 'config.json');
    expect((await stat(configFile)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(configFile, 'utf8'))).toEqual({ hub: hubUrl, token: tokens.bob });
    expect(login.stdout).not.toContain(tokens.bob);

    await writeFolder(folder, playbooks('# Deploy\n\nRun deploy v1.\n'));
    requests = [];
    const first = await atskills('bob', 'publish', folder, '--to', 'hub:acme/playbooks', '--private');
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain('Publishing 2 skills');
    expect(first.stderr).toContain('private: only members of acme can see it');
    expect(first.stdout).toMatch(/^Published hub:acme\/playbooks at revision [0-9a-f]{64}\n$/);
    expect(takeRequests()).toEqual([['/v1/collections/acme/playbooks', 200]]);
    firstRevision = revisionOf(first) as string;
    expect(firstRevision).toMatch(/^[0-9a-f]{64}$/);

    const again = await atskills('bob', 'publish', folder, '--to', 'hub:acme/playbooks', '--private');
    expect(again.code, again.stderr).toBe(0);
    expect(revisionOf(again)).toBe(firstRevision);
    expect(again.stdout).toBe(`Nothing changed: hub:acme/playbooks stays at revision ${firstRevision}\n`);
    const revisions = await fetch(`${hubUrl}/v1/collections/acme/playbooks/revisions`, {
      headers: { authorization: `Bearer ${tokens.bob}` },
    });
    expect(((await revisions.json()) as { revisions: { revision: string }[] }).revisions).toEqual([
      expect.objectContaining({ revision: firstRevision }),
    ]);
  });

  it('carol resolves it on her machine: 200 + archive first, then one 304 per use', async () => {
    const login = await atskills('carol', 'login', '--hub', hubUrl, '--token', tokens.carol);
    expect(login.code, login.stderr).toBe(0);
    requests = [];
    const first = await atskills('carol', 'get', 'hub:acme/playbooks/deploy');
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('Run deploy v1.');
    expect(takeRequests()).toEqual([
      ['/v1/skills/hub:acme/playbooks/deploy', 200],
      ['/v1/archive/hub:acme/playbooks/deploy', 200],
    ]);
    for (let use = 0; use < 3; use++) {
      const next = await atskills('carol', 'get', 'hub:acme/playbooks/deploy');
      expect(next.code, next.stderr).toBe(0);
      expect(next.stdout).toContain('Run deploy v1.');
      expect(takeRequests()).toEqual([['/v1/skills/hub:acme/playbooks/deploy', 304]]);
    }
  });

  it('carol saves and installs it, and the resident block shows its row', async () => {
    const project = machines.carol.repo;
    requests = [];
    const save = await inCarolsRepo('save', 'hub:acme/playbooks/deploy');
    expect(save.code, save.stderr).toBe(0);
    const copy = path.join(project, '.atskills', 'hub', 'acme', 'playbooks', 'deploy');
    expect(await readFile(path.join(copy, 'SKILL.md'), 'utf8')).toContain('Run deploy v1.');
    expect(await readFile(path.join(copy, 'checklist.md'), 'utf8')).toContain('drain the pool');
    expect(await readFile(path.join(copy, '.source'), 'utf8')).toContain('hub:acme/playbooks/deploy');

    // Saved from the machine's cache after one revalidation.
    expect(takeRequests()).toEqual([['/v1/skills/hub:acme/playbooks/deploy', 304]]);
    const install = await inCarolsRepo('install', 'hub:acme/playbooks/deploy');
    expect(install.code, install.stderr).toBe(0);
    expect(await readFile(path.join(project, '.atskills', '.autotrigger'), 'utf8')).toBe(
      '@hub:acme/playbooks/deploy\n',
    );
    const prompt = await inCarolsRepo('prompt');
    expect(prompt.code, prompt.stderr).toBe(0);
    expect(prompt.stdout).toBe('- deploy: Deploy the acme service. (hub:acme/playbooks/deploy)\n');

    const menu = await atskills('carol', 'get', 'hub:acme/playbooks');
    expect(menu.code, menu.stderr).toBe(0);
    expect(menu.stdout).toContain('- hub:acme/playbooks/deploy: Deploy the acme service.');
    expect(menu.stdout).toContain('- hub:acme/playbooks/rollback: Roll back an acme release.');
  });

  it("bob's change reaches carol on her next use (200), then 304 again", async () => {
    await writeFolder(folder, playbooks('# Deploy\n\nRun deploy v2, canary first.\n'));
    const change = await atskills('bob', 'publish', folder, '--to', 'hub:acme/playbooks', '--private');
    expect(change.code, change.stderr).toBe(0);
    const secondRevision = revisionOf(change);
    expect(secondRevision).toMatch(/^[0-9a-f]{64}$/);
    expect(secondRevision).not.toBe(firstRevision);

    requests = [];
    const fresh = await atskills('carol', 'get', 'hub:acme/playbooks/deploy');
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(fresh.stdout).toContain('Run deploy v2, canary first.');
    expect(takeRequests()).toEqual([
      ['/v1/skills/hub:acme/playbooks/deploy', 200],
      ['/v1/archive/hub:acme/playbooks/deploy', 200],
    ]);
    const next = await atskills('carol', 'get', 'hub:acme/playbooks/deploy');
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toContain('Run deploy v2, canary first.');
    expect(takeRequests()).toEqual([['/v1/skills/hub:acme/playbooks/deploy', 304]]);
  });

  it('eve and an anonymous caller find no trace of it', async () => {
    for (const who of ['eve', 'anonymous'] as const) {
      const hidden = await atskills(who, 'get', 'hub:acme/playbooks/deploy');
      const missing = await atskills(who, 'get', 'hub:acme/nonexistent');
      expect(hidden.code, who).toBe(3);
      expect(missing.code, who).toBe(3);
      expect(hidden.stdout).toBe('');
      expect(hidden.stderr).toContain('does not exist on the hub');
      expect(
        hidden.stderr.replaceAll('hub:acme/playbooks/deploy', '<id>').replaceAll('playbooks/deploy', '<p>'),
      ).toBe(missing.stderr.replaceAll('hub:acme/nonexistent', '<id>').replaceAll('nonexistent', '<p>'));

      const search = await atskills(who, 'search', 'deploy');
      expect(search.code, search.stderr).toBe(0);
      expect(search.stdout).toContain('hub:rivals/tools/deploy-helper');
      expect(search.stdout).not.toContain('acme');
    }
    for (const token of [tokens.eve, undefined]) {
      const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
      for (const q of ['deploy', 'acme', 'playbooks', 'rollback']) {
        const res = await fetch(`${hubUrl}/v1/search?q=${q}`, { headers });
        expect(res.status).toBe(200);
        expect((await res.text()).toLowerCase()).not.toContain('acme');
      }
      expect(await stats(token)).toEqual(statsBeforeAcme);
    }
    // A member does see it in search and stats: the filter is by token, not a search that finds nothing.
    const carols = await atskills('carol', 'search', 'deploy');
    expect(carols.stdout).toContain('hub:acme/playbooks/deploy');
    expect(await stats(tokens.carol)).toEqual({
      ...statsBeforeAcme,
      skills: Number(statsBeforeAcme.skills) + 2,
      collections: Number(statsBeforeAcme.collections) + 1,
    });
  });

  it('says so, and warns, when a republish without --public makes a public collection private', async () => {
    const vsw = path.join(machines.eve.project, 'vsw');
    await writeFolder(vsw, { 'lint/SKILL.md': skillMd('lint', 'Lint the rivals code.') });
    const first = await atskills('eve', 'publish', vsw, '--to', 'hub:rivals/vsw', '--public');
    expect(first.code, first.stderr).toBe(0);
    const revision = revisionOf(first) as string;
    const again = await atskills('eve', 'publish', vsw, '--to', 'hub:rivals/vsw');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).not.toContain('Nothing changed');
    expect(again.stdout).toBe(
      `Same content: hub:rivals/vsw stays at revision ${revision}, now private (was public)\n`,
    );
    expect(again.stderr).toContain('warning: hub:rivals/vsw was public and is now private');
    const json = await atskills('eve', 'publish', vsw, '--to', 'hub:rivals/vsw', '--public', '--json');
    expect(JSON.parse(json.stdout)).toMatchObject({
      unchanged: true,
      visibility: 'public',
      previousVisibility: 'private',
    });
    const back = await atskills('eve', 'publish', vsw, '--to', 'hub:rivals/vsw', '--public');
    expect(back.stdout).toBe(`Nothing changed: hub:rivals/vsw stays at revision ${revision}\n`);
  });
});
