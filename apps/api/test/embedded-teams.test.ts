/**
 * The README's Teams flow against a running hub on the embedded database (issue 16: run while `npm start`
 * held the data folder, the CLI silently corrupted it). The hub is a real child process (`server.ts`), the
 * admin commands are real `cli.ts` processes; then a second hub on the same folder is refused, and after a
 * restart every user and token is still there and works.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packCollection, skillMd } from '../../../test/fixtures/archives/make.js';
import {
  embeddedHubEnv,
  type HubProcess,
  startHubProcess,
  stopHubProcess,
} from '../../../test/support/hub-process.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const run = promisify(execFile);

let tempDir: string;
let dataDir: string;
const env = () => ({ ...process.env, ...embeddedHubEnv(dataDir, { RECRAWL_TICK_MS: '0' }) });

/** Starts `server.ts` on the data folder. */
const startHub = () => startHubProcess(env());

/** `npm run hub -- admin ...` as the README runs it (the CLI entry, against the same data folder). */
async function hubCli(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  return run(
    process.execPath,
    ['--conditions=@atskills/source', '--import', 'tsx', 'apps/api/src/cli.ts', ...args],
    {
      cwd: ROOT,
      env: env(),
    },
  );
}

async function stop(hub: HubProcess): Promise<number | null> {
  hub.child.kill('SIGTERM');
  return hub.exited;
}

let hub: HubProcess;
let bobToken: string;
let aliceToken: string;

beforeAll(async () => {
  tempDir = await mkdtemp(path.join(tmpdir(), 'atskills-teams-'));
  dataDir = path.join(tempDir, '.data');
  hub = await startHub();
}, 300_000);

afterAll(async () => {
  await stopHubProcess(hub, 'SIGKILL');
  await rm(tempDir, { recursive: true, force: true });
});

describe('the Teams flow on an embedded hub that is running', () => {
  it('bootstraps accounts through the running hub (README step 1)', async () => {
    expect((await hubCli('admin', 'create-user', 'alice', '--admin')).stdout).toContain('created user alice');
    await hubCli('admin', 'create-user', 'bob');
    await hubCli('admin', 'create-team', 'acme', '--owner', 'alice');
    expect((await hubCli('admin', 'add-member', 'acme', 'bob', '--role', 'publisher')).stdout).toContain(
      'bob is publisher of acme',
    );
    const bob = await hubCli('admin', 'create-token', 'bob', '--scopes', 'read,publish', '--label', 'laptop');
    bobToken = bob.stdout.trim();
    expect(bobToken).toMatch(/^ask_[0-9A-Za-z]{43}$/);
    aliceToken = (await hubCli('admin', 'create-token', 'alice', '--scopes', 'admin')).stdout.trim();
    const ids = [
      ...JSON.parse((await hubCli('admin', 'list-tokens', 'bob', '--json')).stdout),
      ...JSON.parse((await hubCli('admin', 'list-tokens', 'alice', '--json')).stdout),
    ].map((t: { id: number }) => t.id);
    expect(new Set(ids).size).toBe(ids.length);
  }, 180_000);

  it('publishes and resolves with the printed token (README steps 2 and 3)', async () => {
    const me = await fetch(`${hub.url}/admin/me`, { headers: { authorization: `Bearer ${bobToken}` } });
    expect(me.status).toBe(200);
    const body = packCollection({ 'deploy/SKILL.md': skillMd('deploy', 'Deploy the service.') });
    const published = await fetch(`${hub.url}/v1/collections/acme/playbooks?visibility=private`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${bobToken}`, 'content-type': 'application/gzip' },
      body: new Uint8Array(body),
    });
    expect(published.status).toBe(200);
    const skill = await fetch(`${hub.url}/v1/skills/hub:acme/playbooks/deploy`, {
      headers: { authorization: `Bearer ${bobToken}` },
    });
    expect(skill.status).toBe(200);
    expect((await fetch(`${hub.url}/v1/skills/hub:acme/playbooks/deploy`)).status).toBe(404);
  });

  it('refuses a second hub on the same data folder with one line naming the running one', async () => {
    const second = await startHub().then(
      () => {
        throw new Error('a second hub started');
      },
      (err: { code: number; stderr: string }) => err,
    );
    expect(second.code).toBe(1);
    const lines = second.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`in use by a running hub (pid ${hub.child.pid}, ${hub.url})`);
  }, 120_000);

  it('keeps every user and token across a restart, and the CLI works directly while it is down', async () => {
    expect(await stop(hub)).toBe(0);
    expect(existsSync(`${path.join(dataDir, 'db')}.lock`)).toBe(false);
    const users = JSON.parse((await hubCli('admin', 'list-users', '--json')).stdout);
    expect(users.map((u: { name: string }) => u.name).sort()).toEqual(['alice', 'bob']);
    hub = await startHub();
    const me = await fetch(`${hub.url}/admin/me`, { headers: { authorization: `Bearer ${bobToken}` } });
    expect(me.status).toBe(200);
    expect(((await me.json()) as { namespaces: unknown }).namespaces).toContainEqual(
      expect.objectContaining({ name: 'acme', role: 'publisher' }),
    );
    const list = await fetch(`${hub.url}/admin/users`, {
      headers: { authorization: `Bearer ${aliceToken}` },
    });
    expect(((await list.json()) as { users: { name: string }[] }).users.map((u) => u.name).sort()).toEqual([
      'alice',
      'bob',
    ]);
    const skill = await fetch(`${hub.url}/v1/skills/hub:acme/playbooks/deploy`, {
      headers: { authorization: `Bearer ${bobToken}` },
    });
    expect(skill.status).toBe(200);
  }, 180_000);
});
