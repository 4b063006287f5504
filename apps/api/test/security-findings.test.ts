/**
 * Regression tests of the red-team findings of issue 16: each test replays the attack as it was reported
 * against the running hub and checks the answer the hub now gives (the archive tests build their archives
 * here, with real GNU `tar` and Python's `tarfile` where the finding is about them).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Queue } from 'bullmq';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fileEntry,
  gzip,
  packCollection,
  paxEntry,
  skillMd,
  tarEntry,
  tarOf,
} from '../../../test/fixtures/archives/make.js';
import { dropQueuePrefix, redisUrl, uniqueQueuePrefix } from '../../../test/support/redis.js';
import { loggerOptions } from '../src/runtime/logging.js';
import { loadOpsConfig } from '../src/runtime/ops-config.js';
import { createTestHub, type TestHub } from './support/app.js';
import { auth, type Caller, publish, publishRowCounts, seedTeam, type Tokens } from './teams-fixtures.js';

let hub: TestHub;
let tokens: Tokens;
let now = new Date();
let redis: string;
let prefix: string;
let queue: Queue;
const logLines: string[] = [];

const as = (caller: Caller) => auth(tokens, caller);
const call = (
  caller: Caller,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  payload?: unknown,
  remoteAddress?: string,
) =>
  hub.app.inject({
    method,
    url,
    headers: { ...as(caller), ...(payload !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(payload !== undefined ? { payload: JSON.stringify(payload) } : {}),
    ...(remoteAddress ? { remoteAddress } : {}),
  });
/** A problem body without the per-request fields, to compare two refusals. */
const refusal = (res: { statusCode: number; json(): Record<string, unknown> }) => {
  const { requestId: _r, instance: _i, ...rest } = res.json();
  return { status: res.statusCode, ...rest };
};

beforeAll(async () => {
  redis = await redisUrl();
  prefix = uniqueQueuePrefix('security');
  queue = new Queue('crawl-repository', { connection: { url: redis }, prefix });
  const sink = new Writable({
    write(chunk, _enc, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  hub = await createTestHub(
    'security_findings',
    { AUTH_FAILURES_MAX: '5' },
    {
      clock: () => now,
      logger: pino(loggerOptions('info'), sink),
      ops: { config: loadOpsConfig({ RATE_LIMIT_MAX: '0' }), boardQueues: [queue] },
    },
  );
  tokens = await seedTeam(hub.db.db, 'acme');
});

afterAll(async () => {
  await hub?.close();
  await queue?.close();
  if (redis) await dropQueuePrefix(redis, prefix);
});

describe('finding 1: team membership takes consent; owners have no say over tokens', () => {
  it('an owner adding a hub administrator only invites them, and cannot list or revoke their tokens', async () => {
    const invite = await call('owner', 'PUT', '/admin/teams/acme/members/acme-admin', { role: 'reader' });
    expect(invite.statusCode).toBe(202);
    expect(invite.json()).toMatchObject({ status: 'invited', user: 'acme-admin', role: 'reader' });
    const members = (await call('admin', 'GET', '/admin/teams/acme/members')).json().members;
    expect(members.map((m: { user: string }) => m.user)).not.toContain('acme-admin');

    // The attack: list then revoke the administrator's tokens.
    expect((await call('owner', 'GET', '/admin/users/acme-admin/tokens')).statusCode).toBe(403);
    const adminTokens = (await call('admin', 'GET', '/admin/users/acme-admin/tokens')).json().tokens;
    for (const t of adminTokens) {
      expect((await call('owner', 'DELETE', `/admin/tokens/${t.id}`)).statusCode).toBe(404);
    }
    expect((await call('admin', 'GET', '/admin/me')).statusCode).toBe(200);
    // Not a member's either, even one who joined: their tokens act in every namespace they belong to.
    expect((await call('owner', 'GET', '/admin/users/acme-reader/tokens')).statusCode).toBe(403);
    const readerTokens = (await call('admin', 'GET', '/admin/users/acme-reader/tokens')).json().tokens;
    expect((await call('owner', 'DELETE', `/admin/tokens/${readerTokens[0].id}`)).statusCode).toBe(404);
  });

  it('the invitee joins by accepting (with any valid token of theirs); nobody else can accept', async () => {
    expect(
      (await call('owner', 'PUT', '/admin/teams/acme/members/acme-outsider', { role: 'reader' })).statusCode,
    ).toBe(202);
    const mine = (await call('outsider', 'GET', '/admin/invitations')).json().invitations;
    expect(mine).toEqual([
      expect.objectContaining({ team: 'acme', role: 'reader', invitedBy: 'acme-owner' }),
    ]);
    // The owner (or anyone else) cannot accept on the invitee's behalf.
    expect((await call('owner', 'POST', `/admin/invitations/${mine[0].id}/accept`)).statusCode).toBe(404);
    const accepted = await call('outsider', 'POST', `/admin/invitations/${mine[0].id}/accept`);
    expect(accepted.statusCode).toBe(200);
    expect(accepted.json()).toMatchObject({ team: 'acme', user: 'acme-outsider', status: 'member' });
    const members = (await call('owner', 'GET', '/admin/teams/acme/members')).json().members;
    expect(members).toContainEqual(expect.objectContaining({ user: 'acme-outsider', role: 'reader' }));
    expect((await call('outsider', 'POST', `/admin/invitations/${mine[0].id}/accept`)).statusCode).toBe(404);
    const audit = (await call('owner', 'GET', '/admin/namespaces/acme/audit?limit=50')).json().entries;
    expect(audit.map((e: { action: string }) => e.action)).toEqual(
      expect.arrayContaining(['member.invite', 'member.accept']),
    );
    expect((await call('owner', 'DELETE', '/admin/teams/acme/members/acme-outsider')).statusCode).toBe(200);
  });

  it('a hub administrator still adds members directly', async () => {
    const res = await call('admin', 'PUT', '/admin/teams/acme-rivals/members/acme-reader', {
      role: 'reader',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'member' });
  });
});

describe('finding 2: the queue dashboard follows the hub-administrator rule of POST /v1/crawls', () => {
  it('refuses a team owner (admin-scoped token) to pause queues or add jobs', async () => {
    const crawl = await call('owner', 'POST', '/v1/crawls', { repos: ['a/b'] });
    expect(crawl.statusCode).toBe(403);
    const pause = await call('owner', 'PUT', '/admin/queues/api/queues/pause');
    expect(pause.statusCode).toBe(403);
    expect(await queue.isPaused()).toBe(false);
    const add = await call('owner', 'POST', '/admin/queues/api/queues/crawl-repository/add', {
      name: 'x',
      data: { runId: null, owner: 'o', repo: 'r' },
    });
    expect(add.statusCode).toBe(403);
    expect(await queue.count()).toBe(0);
  });

  it('checks job data a hub administrator adds against the queue schema', async () => {
    for (const data of [
      { runId: null, owner: '../../evil', repo: 'r' },
      { runId: null, owner: 'o', repo: 'r/../../x' },
      { runId: null, owner: 'http://attacker', repo: 'r' },
    ]) {
      const res = await call('admin', 'POST', '/admin/queues/api/queues/crawl-repository/add', {
        name: 'x',
        data,
      });
      expect(res.statusCode).toBe(400);
    }
    expect(await queue.count()).toBe(0);
    const ok = await call('admin', 'POST', '/admin/queues/api/queues/crawl-repository/add', {
      name: 'x',
      data: { runId: null, owner: 'octo-org', repo: 'skills.repo' },
    });
    expect(ok.statusCode).toBe(200);
    expect(await queue.count()).toBe(1);
    await queue.obliterate({ force: true });
  });
});

describe('findings 4 and 5: hyphen runs and NUL characters are 400 problems, never 500', () => {
  const nulRoutes = [
    '/v1/search?q=%00',
    '/v1/search?q=deploy&owner=%00',
    '/v1/search?q=deploy&repo=a%00',
    '/v1/search?q=deploy&namespace=acme%00',
    '/v1/search?q=deploy&cursor=%00',
    '/search?q=de%00ploy',
    '/?q=%00',
    '/v1/skills/hub:acme/playbooks/deploy?rev=%00',
    '/v1/archive/hub:acme/playbooks/deploy?rev=a%00',
    '/v1/repos/o%00/r',
    '/v1/repos/o/r%00',
    '/v1/collections/acme/pl%00aybooks/revisions',
    '/api/skills?prefix=acme%00/',
  ];

  it('answers every NUL with a 400 problem and logs no SQL at error level', async () => {
    for (const url of nulRoutes) {
      const res = await call('anonymous', 'GET', url);
      expect(res.statusCode, url).toBe(400);
      // The web page answers with its HTML error page, the API with a problem.
      if (!url.startsWith('/?')) expect(res.headers['content-type']).toContain('application/problem+json');
    }
    const errors = logLines.filter((l) => JSON.parse(l).level >= 50);
    expect(errors.join('\n')).not.toMatch(/select|insert|Failed query/i);
  });

  it('answers a query of 40 hyphens without a 500 on every search route', async () => {
    const hyphens = '-'.repeat(40);
    for (const url of [
      `/v1/search?q=${hyphens}`,
      `/search?q=${hyphens}`,
      `/?q=${hyphens}`,
      `/v1/search?q=a${'-'.repeat(60)}b`,
      `/v1/search?q=${'- '.repeat(40)}`,
    ]) {
      const res = await call('anonymous', 'GET', url);
      expect(res.statusCode, url).toBeLessThan(500);
    }
    expect(logLines.filter((l) => JSON.parse(l).level >= 50)).toEqual([]);
  });
});

describe('finding 6-8: privacy of revisions, dropped and deleted skills, caching', () => {
  it('keeps the metadata and content of revisions published while private private after going public', async () => {
    now = new Date(now.getTime() + 1000);
    const secret = await publish(
      hub.app,
      'acme/turning',
      packCollection({ 'deploy/SKILL.md': skillMd('deploy', 'The private draft.', '# secret draft\n') }),
      as('publisher'),
      'private',
    );
    expect(secret.statusCode).toBe(200);
    const privateSkillRev = (await call('reader', 'GET', '/v1/skills/hub:acme/turning/deploy')).json()
      .revision;
    now = new Date(now.getTime() + 1000);
    const open = await publish(
      hub.app,
      'acme/turning',
      packCollection({ 'deploy/SKILL.md': skillMd('deploy', 'The public release.') }),
      as('publisher'),
      'public',
    );
    expect(open.statusCode).toBe(200);
    const anonymous = (await call('anonymous', 'GET', '/v1/collections/acme/turning/revisions')).json();
    expect(anonymous.revisions.map((r: { revision: string }) => r.revision)).toEqual([open.json().revision]);
    expect(JSON.stringify(anonymous)).not.toContain(secret.json().revision);
    const member = (await call('reader', 'GET', '/v1/collections/acme/turning/revisions')).json();
    expect(member.revisions).toHaveLength(2);
    // The old private revision's content is not reachable by ?rev= either.
    const pinned = `/v1/skills/hub:acme/turning/deploy?rev=${privateSkillRev}`;
    expect((await call('anonymous', 'GET', pinned)).statusCode).toBe(404);
    expect(
      (await call('anonymous', 'GET', `/v1/archive/hub:acme/turning/deploy?rev=${privateSkillRev}`))
        .statusCode,
    ).toBe(404);
    const forMember = await call('reader', 'GET', pinned);
    expect(forMember.statusCode).toBe(200);
    expect(forMember.headers['cache-control']).toBe('private, max-age=31536000, immutable');
  });

  it('hides skills dropped by a publish that makes the collection private, also once it is public again', async () => {
    now = new Date(now.getTime() + 1000);
    const both = packCollection({
      'keep/SKILL.md': skillMd('keep', 'Stays.'),
      'drop/SKILL.md': skillMd('drop', 'Leaves while private.'),
    });
    expect((await publish(hub.app, 'acme/shifting', both, as('publisher'), 'public')).statusCode).toBe(200);
    const dropRev = (await call('anonymous', 'GET', '/v1/skills/hub:acme/shifting/drop')).json().revision;
    now = new Date(now.getTime() + 1000);
    const onlyKeep = packCollection({ 'keep/SKILL.md': skillMd('keep', 'Stays.') });
    expect((await publish(hub.app, 'acme/shifting', onlyKeep, as('publisher'), 'private')).statusCode).toBe(
      200,
    );
    for (const url of [
      '/v1/skills/hub:acme/shifting/drop',
      `/v1/skills/hub:acme/shifting/drop?rev=${dropRev}`,
    ]) {
      const res = await call('anonymous', 'GET', url);
      expect(res.statusCode, url).toBe(404);
    }
    expect((await call('reader', 'GET', '/v1/skills/hub:acme/shifting/drop')).statusCode).toBe(410);
    now = new Date(now.getTime() + 1000);
    const keepV2 = packCollection({ 'keep/SKILL.md': skillMd('keep', 'Stays, public again.') });
    expect((await publish(hub.app, 'acme/shifting', keepV2, as('publisher'), 'public')).statusCode).toBe(200);
    expect((await call('anonymous', 'GET', '/v1/skills/hub:acme/shifting/keep')).statusCode).toBe(200);
    expect((await call('anonymous', 'GET', '/v1/skills/hub:acme/shifting/drop')).statusCode).toBe(404);
  });

  it('answers a deleted public collection 404 to non-members and 410 to members', async () => {
    now = new Date(now.getTime() + 1000);
    const body = packCollection({ 'tool/SKILL.md': skillMd('tool', 'A public tool.') });
    expect((await publish(hub.app, 'acme/retired', body, as('publisher'), 'public')).statusCode).toBe(200);
    expect((await call('publisher', 'DELETE', '/v1/collections/acme/retired')).statusCode).toBe(200);
    const missing = await call('anonymous', 'GET', '/v1/skills/hub:acme/nonexistent/tool');
    for (const caller of ['anonymous', 'outsider'] as const) {
      const res = await call(caller, 'GET', '/v1/skills/hub:acme/retired/tool');
      expect(res.statusCode).toBe(404);
      expect(res.json().detail).toBe(missing.json().detail.replace('nonexistent', 'retired'));
      expect((await call(caller, 'GET', '/v1/collections/acme/retired/revisions')).statusCode).toBe(404);
    }
    expect((await call('reader', 'GET', '/v1/skills/hub:acme/retired/tool')).statusCode).toBe(410);
  });

  it('sends pinned revisions of private skills with Cache-Control: private', async () => {
    const body = packCollection({ 'note/SKILL.md': skillMd('note', 'A private note.') });
    expect((await publish(hub.app, 'acme/vault', body, as('publisher'), 'private')).statusCode).toBe(200);
    const rev = (await call('reader', 'GET', '/v1/skills/hub:acme/vault/note')).json().revision;
    for (const url of [
      `/v1/skills/hub:acme/vault/note?rev=${rev}`,
      `/v1/archive/hub:acme/vault/note?rev=${rev}`,
      `/api/skills/acme/vault/note?rev=${rev}`,
    ]) {
      const res = await call('reader', 'GET', url);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['cache-control'], url).toBe('private, max-age=31536000, immutable');
    }
    const open = packCollection({ 'note/SKILL.md': skillMd('note', 'A public note.') });
    expect((await publish(hub.app, 'acme/board', open, as('publisher'), 'public')).statusCode).toBe(200);
    const openRev = (await call('anonymous', 'GET', '/v1/skills/hub:acme/board/note')).json().revision;
    const res = await call('anonymous', 'GET', `/v1/skills/hub:acme/board/note?rev=${openRev}`);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  });
});

/** Lists a tar with GNU tar and with Python's tarfile. */
function listWithRealTools(tar: Buffer): { gnu: string[]; python: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'tar-agree-'));
  try {
    const file = join(dir, 'a.tar');
    writeFileSync(file, tar);
    const gnu = execFileSync('tar', ['-tf', file], { encoding: 'utf8' }).split('\n').filter(Boolean);
    const python = execFileSync(
      'python3',
      ['-c', 'import sys,tarfile\nfor m in tarfile.open(sys.argv[1]).getmembers(): print(m.name)', file],
      { encoding: 'utf8' },
    )
      .split('\n')
      .filter(Boolean);
    return { gnu, python };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('finding 9: the tar reader agrees with GNU tar', () => {
  it("publishes a real `tar --format=gnu` archive whose long name's first 100 bytes end in /", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gnu-tar-'));
    try {
      const sub = 'n'.repeat(92);
      const longPath = `deploy/${sub}/notes.md`;
      expect(Buffer.byteLength(longPath.slice(0, 100))).toBe(100);
      expect(longPath[99]).toBe('/');
      mkdirSync(join(dir, 'deploy', sub), { recursive: true });
      writeFileSync(join(dir, 'deploy', 'SKILL.md'), skillMd('deploy', 'Deploy with long notes.'));
      writeFileSync(join(dir, longPath), 'notes behind a long name\n');
      const tar = execFileSync('tar', ['--format=gnu', '-cf', '-', '-C', dir, 'deploy'], {
        maxBuffer: 1 << 24,
      });
      const res = await publish(hub.app, 'acme/gnu-long', gzip(tar), as('publisher'));
      expect(res.statusCode, res.body).toBe(200);
      const files = (await call('reader', 'GET', '/v1/skills/hub:acme/gnu-long/deploy')).json().files;
      expect(files.map((f: { path: string }) => f.path)).toContain(`${sub}/notes.md`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a GNU header with a name prefix field, which GNU tar and Python read as different paths', async () => {
    const entry = tarEntry({ name: 'smuggled/SKILL.md', data: skillMd('smuggled', 'Seen by all.') });
    const header = entry.subarray(0, 512);
    header.write('ustar  \0', 257, 'latin1');
    header.write('hidden', 345, 'latin1');
    header.fill(0x20, 148, 156);
    let sum = 0;
    for (const b of header) sum += b;
    header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
    const tar = tarOf([entry]);
    const listed = listWithRealTools(tar);
    expect(listed.gnu).toEqual(['smuggled/SKILL.md']);
    expect(listed.python).toEqual(['hidden/smuggled/SKILL.md']);
    const before = await publishRowCounts(hub.db.db);
    const res = await publish(hub.app, 'acme/smuggle-prefix', gzip(tar), as('publisher'));
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('archive-bad-header');
    expect(await publishRowCounts(hub.db.db)).toEqual(before);
  });

  it('refuses an entry hidden in the "data" of a directory entry (read by one tool, skipped by the other)', async () => {
    const hidden = tarEntry({ name: 'evil/SKILL.md', data: skillMd('evil', 'Listed by nobody.') });
    const tar = tarOf([
      fileEntry('ok/SKILL.md', skillMd('ok', 'A fine skill.')),
      tarEntry({ name: 'ok/folder/', type: '0', data: hidden }),
    ]);
    const listed = listWithRealTools(tar);
    expect(listed.gnu).not.toContain('evil/SKILL.md');
    expect(listed.python).not.toContain('evil/SKILL.md');
    const before = await publishRowCounts(hub.db.db);
    const res = await publish(hub.app, 'acme/smuggle-dir', gzip(tar), as('publisher'));
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('archive-bad-header');
    expect(await publishRowCounts(hub.db.db)).toEqual(before);
  });
});

describe('finding 10: rate limits and token minting', () => {
  it('counts failed authentications per client address: made-up tokens get 429 after the limit', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      const res = await hub.app.inject({
        url: '/v1/search?q=deploy',
        headers: { authorization: `Bearer ask_${String(i).padStart(43, 'x')}` },
        remoteAddress: '198.51.100.7',
      });
      statuses.push(res.statusCode);
      if (res.statusCode === 429) expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(new Set(statuses.slice(5))).toEqual(new Set([429]));
    // Another address with a real token is not affected; a token that verified lately still works from the
    // cut-off address (a colleague behind the same NAT); one not seen lately waits out the minute.
    const other = await call('reader', 'GET', '/v1/search?q=deploy', undefined, '198.51.100.8');
    expect(other.statusCode).toBe(200);
    expect((await call('reader', 'GET', '/v1/search?q=deploy', undefined, '198.51.100.7')).statusCode).toBe(
      200,
    );
    expect(
      (await call('no-publish-scope', 'GET', '/v1/search?q=deploy', undefined, '198.51.100.7')).statusCode,
    ).toBe(429);
  });

  it('bounds token minting per user', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 22; i++) {
      const res = await call('owner', 'POST', '/admin/users/acme-owner/tokens', { scopes: ['read'] });
      statuses.push(res.statusCode);
    }
    expect(statuses.filter((s) => s === 201).length).toBeLessThanOrEqual(20);
    expect(statuses.at(-1)).toBe(429);
  });
});

describe('finding 11: no user-name enumeration through admin routes', () => {
  it('refuses alike for users that exist and users that do not', async () => {
    const pairs: [string, string, 'GET' | 'POST' | 'PUT' | 'DELETE', unknown?][] = [
      ['/admin/users/acme-reader/tokens', '/admin/users/nosuchuser/tokens', 'GET'],
      ['/admin/users/acme-reader/tokens', '/admin/users/nosuchuser/tokens', 'POST', { scopes: ['read'] }],
      [
        '/admin/teams/acme/members/acme-outsider',
        '/admin/teams/acme/members/nosuchuser',
        'PUT',
        { role: 'reader' },
      ],
      ['/admin/teams/acme/members/acme-outsider', '/admin/teams/acme/members/nosuchuser', 'DELETE'],
    ];
    for (const [real, ghost, method, payload] of pairs) {
      const a = await call('owner', method, real, payload);
      const b = await call('owner', method, ghost, payload);
      expect(a.statusCode, `${method} ${real}`).toBe(b.statusCode);
      const strip = (x: Record<string, unknown>) =>
        JSON.stringify(x)
          .replaceAll('acme-outsider', 'U')
          .replaceAll('acme-reader', 'U')
          .replaceAll('nosuchuser', 'U');
      const bodyA = a.statusCode === 202 ? a.json() : refusal(a);
      const bodyB = b.statusCode === 202 ? b.json() : refusal(b);
      expect(strip(bodyA)).toBe(strip(bodyB));
    }
  });
});

describe('finding 12: reserved .source and nested .atskills/ are refused on publish', () => {
  for (const [label, path] of [
    ['a .source at the skill root', 'deploy/.source'],
    ['a .SOURCE in another case', 'deploy/.SOURCE'],
    ['a nested .atskills/ folder', 'deploy/.atskills/gh/o/r/x/SKILL.md'],
  ] as const) {
    it(`refuses ${label}, storing nothing`, async () => {
      const before = await publishRowCounts(hub.db.db);
      const body = packCollection({
        'deploy/SKILL.md': skillMd('deploy', 'Deploy.'),
        [path]: 'gh:o/r/x\n2026-01-01 rev:abc\n',
      });
      const res = await publish(hub.app, 'acme/reserved', body, as('publisher'));
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatchObject({ code: 'invalid-skill', rule: 'reserved-path', file: path });
      expect(await publishRowCounts(hub.db.db)).toEqual(before);
    });
  }
});

describe('finding 13: PAX NUL, fullwidth dots, revision order, tokens in URLs, /metrics', () => {
  it('refuses a pax path holding a NUL and a fullwidth ．． segment', async () => {
    const withNul = gzip(
      tarOf([
        fileEntry('ok/SKILL.md', skillMd('ok', 'Fine.')),
        paxEntry({ path: 'ok/notes.md\0../../etc/passwd' }),
        tarEntry({ name: 'ok/notes.md', data: 'x' }),
      ]),
    );
    const fullwidth = packCollection({ 'ok/SKILL.md': skillMd('ok', 'Fine.'), 'ok/．．/x.md': 'x' });
    for (const body of [withNul, fullwidth]) {
      const before = await publishRowCounts(hub.db.db);
      const res = await publish(hub.app, 'acme/paths', body, as('publisher'));
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe('archive-unsafe-path');
      expect(await publishRowCounts(hub.db.db)).toEqual(before);
    }
  });

  it('lists revisions in commit order, even when a publish that arrived earlier commits later', async () => {
    // Two publishes race: B arrives first (its clock reads earlier) but A takes the lock and commits first.
    const later = now.getTime() + 10_000;
    now = new Date(later);
    const a = await publish(
      hub.app,
      'acme/raced',
      packCollection({ 'x/SKILL.md': skillMd('x', 'A.') }),
      as('publisher'),
    );
    now = new Date(later - 5_000);
    const b = await publish(
      hub.app,
      'acme/raced',
      packCollection({ 'x/SKILL.md': skillMd('x', 'B.') }),
      as('publisher'),
    );
    now = new Date(later + 1_000);
    const list = (await call('reader', 'GET', '/v1/collections/acme/raced/revisions')).json();
    expect(list.currentRevision).toBe(b.json().revision);
    expect(list.revisions.map((r: { revision: string }) => r.revision)).toEqual([
      b.json().revision,
      a.json().revision,
    ]);
  });

  it('never logs a token sent in a query string', async () => {
    const secret = tokens.reader;
    await call('anonymous', 'GET', `/v1/search?q=deploy&token=${secret}`);
    await call('anonymous', 'GET', `/v1/search?access_token=${secret}&q=deploy`);
    expect(logLines.join('\n')).not.toContain(secret);
    expect(logLines.join('\n')).not.toContain(secret.slice(4));
  });

  it('serves /metrics only to hub administrators unless METRICS_PUBLIC is set', async () => {
    expect((await call('anonymous', 'GET', '/metrics')).statusCode).toBe(404);
    expect((await call('owner', 'GET', '/metrics')).statusCode).toBe(404);
    expect((await call('admin', 'GET', '/metrics')).statusCode).toBe(200);
    const open = await createTestHub(
      'security_metrics_public',
      {},
      {
        ops: { config: loadOpsConfig({ RATE_LIMIT_MAX: '0', METRICS_PUBLIC: 'true' }) },
      },
    );
    try {
      expect((await open.app.inject('/metrics')).statusCode).toBe(200);
    } finally {
      await open.close();
    }
  });
});
