import { Writable } from 'node:stream';
import { apiTokens } from '@atskills/db';
import { eq } from 'drizzle-orm';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli.js';
import { loggerOptions } from '../src/runtime/logging.js';
import { hashToken } from '../src/services/auth/tokens.js';
import { createTestHub, type TestHub } from './support/app.js';
import { auth, type Caller, seedTeam, type Tokens } from './teams-fixtures.js';

let hub: TestHub;
let tokens: Tokens;
let now = new Date('2030-01-01T00:00:00Z');
const logLines: string[] = [];
const secretsSeen: string[] = [];

const call = (
  caller: Caller | { token: string },
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  payload?: unknown,
) =>
  hub.app.inject({
    method,
    url,
    headers: {
      ...(typeof caller === 'string' ? auth(tokens, caller) : { authorization: `Bearer ${caller.token}` }),
      ...(payload ? { 'content-type': 'application/json' } : {}),
    },
    ...(payload ? { payload: JSON.stringify(payload) } : {}),
  });

beforeAll(async () => {
  // Every log line at the most verbose level, through the hub's own logger options (with its redaction).
  const sink = new Writable({
    write(chunk, _enc, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  hub = await createTestHub(
    'teams_admin',
    {},
    { clock: () => now, logger: pino(loggerOptions('trace'), sink) },
  );
  // Tokens are made with the real clock; the hub's clock starts later but before they expire.
  now = new Date(Date.now() + 60_000);
  tokens = await seedTeam(hub.db.db, 'acme');
  secretsSeen.push(...Object.values(tokens));
});

afterAll(async () => {
  await hub?.close();
});

describe('tokens', () => {
  let secret: string;
  let id: number;

  it('are created once: the secret is in the creation answer only, stored as its sha256', async () => {
    const res = await call('owner', 'POST', '/admin/users/acme-owner/tokens', {
      label: 'laptop',
      scopes: ['read', 'publish'],
    });
    expect(res.statusCode).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    secret = body.token;
    id = body.id;
    secretsSeen.push(secret);
    expect(secret).toMatch(/^ask_[0-9A-Za-z]{43}$/);
    expect(body).toMatchObject({
      user: 'acme-owner',
      label: 'laptop',
      scopes: ['read', 'publish'],
      prefix: secret.slice(0, 10),
    });
    const [row] = await hub.db.db.select().from(apiTokens).where(eq(apiTokens.id, id));
    expect(row?.hash).toBe(hashToken(secret));
    expect(JSON.stringify(row)).not.toContain(secret);

    const list = await call('owner', 'GET', '/admin/users/acme-owner/tokens');
    expect(list.statusCode).toBe(200);
    expect(list.body).not.toContain(secret);
    expect(list.body).not.toContain(hashToken(secret));
    expect(list.json().tokens.map((t: { id: number }) => t.id)).toContain(id);
  });

  it('record their last use at most once a minute', async () => {
    const lastUsed = async () =>
      (await hub.db.db.select().from(apiTokens).where(eq(apiTokens.id, id)))[0]?.lastUsedAt;
    expect(await lastUsed()).toBeNull();
    expect((await call({ token: secret }, 'GET', '/admin/me')).json()).toMatchObject({
      user: 'acme-owner',
      scopes: ['read', 'publish'],
    });
    const first = await lastUsed();
    expect(first?.toISOString()).toBe(now.toISOString());
    now = new Date(now.getTime() + 30_000);
    await call({ token: secret }, 'GET', '/admin/me');
    expect((await lastUsed())?.toISOString()).toBe(first?.toISOString());
    now = new Date(now.getTime() + 31_000);
    await call({ token: secret }, 'GET', '/admin/me');
    expect((await lastUsed())?.toISOString()).toBe(now.toISOString());
  });

  it('stop working once revoked or expired, with a clear 401', async () => {
    const revoked = await call('owner', 'DELETE', `/admin/tokens/${id}`);
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json().revokedAt).toBe(now.toISOString());
    const after = await call({ token: secret }, 'GET', '/v1/skills/hub:acme/anything');
    expect(after.statusCode).toBe(401);
    expect(after.json()).toMatchObject({ code: 'unauthorized', detail: expect.stringContaining('revoked') });
    expect((await call('expired', 'GET', '/admin/me')).json().detail).toContain('expired');
    const malformed = await hub.app.inject({
      method: 'GET',
      url: '/admin/me',
      headers: { authorization: 'Bearer hunter2' },
    });
    expect(malformed.statusCode).toBe(401);
    expect(malformed.body).not.toContain('hunter2');
    const unknown = `ask_${'x'.repeat(43)}`;
    expect((await call({ token: unknown }, 'GET', '/admin/me')).json().detail).toBe('Unknown token.');
  });

  it("are minted, listed and revoked only by their user or administrators; never by a team's owners", async () => {
    expect(
      (await call('owner', 'POST', '/admin/users/acme-reader/tokens', { scopes: ['read'] })).statusCode,
    ).toBe(403);
    const minted = await call('admin', 'POST', '/admin/users/acme-reader/tokens', {
      scopes: ['read'],
      expiresInDays: 7,
    });
    expect(minted.statusCode).toBe(201);
    secretsSeen.push(minted.json().token);
    expect((await call('owner', 'GET', '/admin/users/acme-reader/tokens')).statusCode).toBe(403);
    expect((await call('admin', 'GET', '/admin/users/acme-reader/tokens')).statusCode).toBe(200);
    expect((await call('outsider', 'GET', '/admin/users/acme-reader/tokens')).statusCode).toBe(403);
    // Without the admin scope: 403 whatever the id. With it, an id the caller may not oversee answers like a
    // missing one.
    expect((await call('outsider', 'DELETE', `/admin/tokens/${minted.json().id}`)).statusCode).toBe(403);
    expect((await call('outsider', 'DELETE', '/admin/tokens/999999')).statusCode).toBe(403);
    const outsiderAdmin = (
      await call('admin', 'POST', '/admin/users/acme-outsider/tokens', { scopes: ['admin'] })
    ).json().token;
    secretsSeen.push(outsiderAdmin);
    const foreign = await call({ token: outsiderAdmin }, 'DELETE', `/admin/tokens/${minted.json().id}`);
    const missing = await call({ token: outsiderAdmin }, 'DELETE', '/admin/tokens/999999');
    expect([foreign.statusCode, missing.statusCode]).toEqual([404, 404]);
    expect(foreign.json().detail.replace(String(minted.json().id), 'N')).toBe(
      missing.json().detail.replace('999999', 'N'),
    );
    expect((await call('owner', 'DELETE', `/admin/tokens/${minted.json().id}`)).statusCode).toBe(404);
    expect((await call('admin', 'DELETE', `/admin/tokens/${minted.json().id}`)).statusCode).toBe(200);
    // A token without the admin scope manages nothing.
    expect((await call('publisher', 'GET', '/admin/users/acme-publisher/tokens')).json()).toMatchObject({
      status: 403,
      code: 'forbidden',
      scope: 'admin',
    });
  });
});

describe('users, teams and members', () => {
  it('only administrators create users and teams', async () => {
    expect((await call('owner', 'POST', '/admin/users', { name: 'carol' })).statusCode).toBe(403);
    expect((await call('anonymous', 'POST', '/admin/users', { name: 'carol' })).statusCode).toBe(401);
    expect(
      (await call('admin', 'POST', '/admin/users', { name: 'carol', email: 'c@example.com' })).statusCode,
    ).toBe(201);
    expect((await call('admin', 'POST', '/admin/users', { name: 'Carol' })).json().code).toBe('conflict');
    expect((await call('admin', 'POST', '/admin/users', { name: '-bad-' })).json().code).toBe('invalid-name');
    const team = await call('admin', 'POST', '/admin/teams', { name: 'platform', owner: 'carol' });
    expect(team.statusCode).toBe(201);
    expect((await call('admin', 'POST', '/admin/teams', { name: 'carol' })).statusCode).toBe(409);
    expect(
      (await call('admin', 'GET', '/admin/users')).json().users.map((u: { name: string }) => u.name),
    ).toContain('carol');
  });

  it('team owners invite, re-role and remove members; administrators add; never the last owner', async () => {
    const put = (caller: Caller, user: string, role: string) =>
      call(caller, 'PUT', `/admin/teams/acme/members/${user}`, { role });
    const invited = await put('owner', 'carol', 'reader');
    expect(invited.statusCode).toBe(202);
    expect(invited.json()).toMatchObject({ status: 'invited', role: 'reader' });
    expect((await put('admin', 'carol', 'reader')).json()).toMatchObject({
      status: 'member',
      role: 'reader',
      previousRole: null,
    });
    expect((await put('owner', 'carol', 'publisher')).json()).toMatchObject({
      role: 'publisher',
      previousRole: 'reader',
    });
    expect((await put('admin', 'carol', 'owner')).statusCode).toBe(200);
    expect((await put('outsider', 'carol', 'reader')).statusCode).toBe(403);
    expect((await put('owner', 'carol', 'emperor')).statusCode).toBe(400);
    expect((await call('owner', 'DELETE', '/admin/teams/acme/members/carol')).statusCode).toBe(200);
    const lastOwner = await call('owner', 'DELETE', '/admin/teams/acme/members/acme-owner');
    expect(lastOwner.statusCode).toBe(409);
    expect(lastOwner.json().detail).toContain('last owner');
    const members = (await call('owner', 'GET', '/admin/teams/acme/members')).json().members;
    expect(members).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ user: 'acme-owner', role: 'owner' }),
        expect.objectContaining({ user: 'acme-reader', role: 'reader' }),
      ]),
    );
    // Non-owners get the same 403 for a team that exists and one that does not.
    const real = await call('outsider', 'GET', '/admin/teams/acme/members');
    const ghost = await call('outsider', 'GET', '/admin/teams/nosuchteam/members');
    expect([real.statusCode, ghost.statusCode]).toEqual([403, 403]);
  });

  it('the audit log has who, what, when and the request id of each change', async () => {
    const res = await call('owner', 'GET', '/admin/namespaces/acme/audit?limit=100');
    const entries = res.json().entries as {
      actor: string;
      action: string;
      target: string;
      requestId: string | null;
      at: string;
    }[];
    const line = (e: (typeof entries)[number]) => `${e.actor} ${e.action} ${e.target}`;
    expect(entries.map(line)).toEqual(
      expect.arrayContaining([
        'acme-owner member.invite carol',
        'acme-admin member.add carol',
        'acme-owner member.role carol',
        'acme-admin member.role carol',
        'acme-owner member.remove carol',
        'operator team.create acme',
      ]),
    );
    expect(entries.find((e) => e.action === 'member.remove')?.requestId).toEqual(expect.any(String));
    const own = await call('owner', 'GET', '/admin/namespaces/acme-owner/audit');
    expect(own.json().entries.map((e: { action: string }) => e.action)).toEqual(
      expect.arrayContaining(['token.create', 'token.revoke']),
    );
  });
});

describe('secrets stay secret', () => {
  it('no token appears in any log line, error or metric', async () => {
    await call('owner', 'GET', '/metrics');
    const metrics = await call('admin', 'GET', '/metrics');
    const everything = logLines.join('\n') + metrics.body;
    expect(logLines.length).toBeGreaterThan(10);
    for (const secret of secretsSeen) {
      expect(everything).not.toContain(secret);
      expect(everything).not.toContain(secret.slice(4));
    }
  });
});

describe('npm run hub -- admin', () => {
  const run = async (...argv: string[]) => {
    let stdout = '';
    let stderr = '';
    const code = await runCli(argv, {
      database: hub.db,
      stdout: (t) => {
        stdout += t;
      },
      stderr: (t) => {
        stderr += t;
      },
      now: () => now,
    });
    return { code, stdout, stderr };
  };

  it('bootstraps users, teams, members and tokens, and reports errors clearly', async () => {
    expect(await run('admin', 'create-user', 'dave', '--admin')).toMatchObject({
      code: 0,
      stdout: 'created user dave (administrator)\n',
    });
    expect((await run('admin', 'create-team', 'ops', '--owner', 'dave')).stdout).toContain(
      'created team ops owned by dave',
    );
    expect((await run('admin', 'add-member', 'ops', 'carol', '--role', 'publisher')).stdout).toContain(
      'carol is publisher of ops',
    );
    const created = await run(
      'admin',
      'create-token',
      'dave',
      '--scopes',
      'read,publish',
      '--label',
      'ci',
      '--json',
    );
    expect(created.code).toBe(0);
    const token = JSON.parse(created.stdout);
    expect(token.token).toMatch(/^ask_/);
    secretsSeen.push(token.token);
    // The CLI-made token works against the API.
    expect((await call({ token: token.token }, 'GET', '/admin/me')).json()).toMatchObject({
      user: 'dave',
      scopes: ['read', 'publish'],
    });
    const listed = await run('admin', 'list-tokens', 'dave');
    expect(listed.stdout).toContain(`${token.id}\t${token.prefix}...\tread,publish\tactive\tci`);
    expect(listed.stdout).not.toContain(token.token);
    expect((await run('admin', 'revoke-token', String(token.id))).stdout).toContain(
      `revoked token ${token.id}`,
    );
    expect((await run('admin', 'list-tokens', 'dave')).stdout).toContain('revoked');
    expect((await run('admin', 'audit', 'ops')).stdout).toMatch(/operator\tmember\.add\tcarol/);

    expect(await run('admin', 'add-member', 'ops', 'nobody')).toMatchObject({
      code: 1,
      stderr: 'error (not-found): No user "nobody".\n',
    });
    expect((await run('admin', 'create-user', 'dave')).stderr).toContain('error (conflict)');
    expect((await run('admin', 'create-token', 'dave', '--scopes', 'root')).stderr).toContain(
      'unknown: root',
    );
    expect((await run('admin', 'revoke-token', 'abc')).code).toBe(2);
    expect((await run('admin', 'bogus')).code).not.toBe(0);
  });
});
