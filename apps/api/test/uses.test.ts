// Uses counting (services/uses.ts, /about/metrics) through the real app: every resolution route counts,
// distinct clients count once a day, the per-client cap holds, nothing that identifies a client is stored,
// Redis HyperLogLogs and the database table agree, and a private skill's uses reach only its team.

import { sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../../test/support/database.js';
import { dropQueuePrefix, redisUrl, uniqueQueuePrefix } from '../../../test/support/redis.js';
import { clientDigest } from '../src/services/uses.js';
import { createTestHub, type TestHub } from './support/app.js';
import { seedTeam, type Tokens } from './teams-fixtures.js';
import { insertSkills, webFixtures } from './web-fixtures.js';

const DEPLOY = 'gh:acme/tools/skills/deploy-runbook';
const ROLLBACK = 'gh:acme/tools/skills/rollback';
const PRIVATE = 'hub:secretco/ops/deploy-secret';
const ADDRESS = '203.0.113.77';

let hub: TestHub;
let tokens: Tokens;

beforeAll(async () => {
  hub = await createTestHub('uses_table', {}, { uses: { capPerClient: 3 } });
  await insertSkills(hub.db.db, webFixtures());
  tokens = await seedTeam(hub.db.db, 'secretco');
});

afterAll(async () => {
  await hub?.close();
});

const named = new Map<string, number>();
/** A distinct client: its own address (uses count addresses and accounts, not headers). */
function client(n: number | string, extra: Record<string, string> = {}) {
  let octet = typeof n === 'number' ? n : named.get(n);
  if (octet === undefined) {
    octet = 100 + named.size;
    named.set(String(n), octet);
  }
  return { headers: { 'user-agent': `atskills-test/${n}`, ...extra }, remoteAddress: `198.51.100.${octet}` };
}

async function uses(identity: string, headers: Record<string, string> = {}) {
  const res = await hub.app.inject({ method: 'GET', url: `/v1/skills/${identity}`, headers });
  return res.json().uses as { week: number; total: number };
}

async function usesRow(identity: string): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    hub.db.db,
    sql`select coalesce(sum(u.uses), 0)::int as n from skill_uses u join skills s on s.id = u.skill_id where s.identity = ${identity}`,
  );
  return row!.n;
}

describe('uses in the database (no Redis)', () => {
  it('counts each resolution route once per distinct client per day', async () => {
    const app = hub.app;
    const get = await app.inject({ method: 'GET', url: `/v1/skills/${DEPLOY}`, ...client(1) });
    expect(get.statusCode).toBe(200);
    const etag = get.headers.etag as string;
    // The same client in a loop stays one use.
    for (let i = 0; i < 20; i++)
      await app.inject({ method: 'GET', url: `/v1/skills/${DEPLOY}`, ...client(1) });
    const probe = await app.inject({ method: 'HEAD', url: `/v1/skills/${DEPLOY}`, ...client(2) });
    expect(probe.statusCode).toBe(200);
    const notModified = await app.inject({
      method: 'GET',
      url: `/v1/skills/${DEPLOY}`,
      ...client(3, { 'if-none-match': etag }),
    });
    expect(notModified.statusCode).toBe(304);
    const batch = await app.inject({
      method: 'POST',
      url: '/v1/resolve',
      ...client(4),
      payload: { items: [{ identity: DEPLOY }, { identity: 'gh:acme/tools/skills/nope' }] },
    });
    expect(batch.statusCode).toBe(200);
    const archive = await app.inject({ method: 'GET', url: `/v1/archive/${DEPLOY}`, ...client(5) });
    expect(archive.statusCode).toBe(200);
    const compat = await app.inject({ method: 'GET', url: '/api/skills/team/kit/lint', ...client(6) });
    expect(compat.statusCode).toBe(200);
    const mcp = await app.inject({
      method: 'POST',
      url: '/mcp',
      ...client(7, {
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
      }),
      payload: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'resolve_skill', arguments: { identity: DEPLOY } },
      },
    });
    expect(mcp.statusCode).toBe(200);
    // A refused resolution counts nothing.
    await app.inject({
      method: 'GET',
      url: '/v1/skills/gh:acme/tools/skills/legacy-deploy',
      ...client(8),
    });
    await app.uses.flush();

    expect(await usesRow(DEPLOY)).toBe(6); // clients 1, 2, 3, 4, 5, 7
    expect(await usesRow('hub:team/kit/lint')).toBe(1);
    expect(await usesRow('gh:acme/tools/skills/legacy-deploy')).toBe(0);
    expect(await uses(DEPLOY)).toEqual({ week: 6, total: 6 });
    const search = await app.inject({ method: 'GET', url: '/search?q=deploy+runbook' });
    const hit = search.json().results.find((r: { identity: string }) => r.identity === DEPLOY);
    expect(hit.uses).toEqual({ week: 6, total: 6 });
  });

  it('shows uses on the skill page, in search results, in the badge (ETag, cacheable) and documents them', async () => {
    const page = await hub.app.inject({ method: 'GET', url: `/s/${DEPLOY}` });
    expect(page.body).toContain('<dt>Uses</dt><dd>6 this week · 6 all time (<a href="/about/metrics">');
    expect(page.body).toContain(`src="/badge/${DEPLOY}.svg"`);
    const results = await hub.app.inject({ method: 'GET', url: '/?q=deploy+runbook' });
    expect(results.body).toContain('6 uses this week');
    const badge = await hub.app.inject({ method: 'GET', url: `/badge/${DEPLOY}.svg` });
    expect(badge.statusCode).toBe(200);
    expect(badge.headers['content-type']).toBe('image/svg+xml; charset=utf-8');
    expect(badge.headers['cache-control']).toBe('public, max-age=3600');
    expect(badge.body).toContain('deploy-runbook: 6 uses/week');
    const again = await hub.app.inject({
      method: 'GET',
      url: `/badge/${DEPLOY}.svg`,
      headers: { 'if-none-match': badge.headers.etag as string },
    });
    expect(again.statusCode).toBe(304);
    // Viewing pages and badges is not a use; the API read of the first test (a client of its own) was one.
    await hub.app.uses.flush();
    expect(await usesRow(DEPLOY)).toBe(7);
    const metrics = await hub.app.inject({ method: 'GET', url: '/about/metrics' });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).toContain('<h1>How uses are counted</h1>');
    expect(metrics.body).toContain('at most 200 different skills a day');
  });

  it('caps how many skills one client adds a use to per day', async () => {
    const many = [
      'hub:team/kit/format',
      ROLLBACK,
      'gh:bigco/mono/packs/alpha/s1',
      'gh:bigco/mono/packs/alpha/s2',
    ];
    for (const identity of many) {
      await hub.app.inject({ method: 'GET', url: `/v1/skills/${identity}`, ...client('looper') });
    }
    await hub.app.uses.flush();
    const counted = await Promise.all(many.map((identity) => usesRow(identity)));
    expect(counted).toEqual([1, 1, 1, 0]); // the cap of this hub is 3 skills per client per day
  });

  it('ranks equally strong matches by weekly uses, never a weaker match over a stronger one', async () => {
    const S4 = 'gh:bigco/mono/packs/alpha/s4';
    const S5 = 'gh:bigco/mono/packs/alpha/s5';
    const order = async (q: string) =>
      (await hub.app.inject({ method: 'GET', url: `/search?q=${q}&source=gh&owner=bigco&limit=100` }))
        .json()
        .results.map((r: { identity: string }) => r.identity);
    const before = await order('alpha+pack');
    expect(before.indexOf(S4)).toBeLessThan(before.indexOf(S5));
    for (let n = 0; n < 5; n++) {
      await hub.app.inject({ method: 'GET', url: `/v1/skills/${S5}`, ...client(`fan-${n}`) });
    }
    await hub.app.uses.flush();
    const after = await order('alpha+pack');
    expect(after.indexOf(S5)).toBeLessThan(after.indexOf(S4));
    // The exact name is a stronger match than any prior.
    expect((await order('s4'))[0]).toBe(S4);
  });

  it('stores no address, token or unsalted client digest', async () => {
    const headers = { 'user-agent': 'atskills-test/private-eye', authorization: `Bearer ${tokens.reader}` };
    await hub.app.inject({ method: 'GET', url: `/v1/skills/${ROLLBACK}`, headers, remoteAddress: ADDRESS });
    await hub.app.uses.flush();
    const [reader] = await queryRows<{ id: number }>(
      hub.db.db,
      sql`select id from users where name = 'secretco-reader'`,
    );
    const digest = clientDigest({ ip: ADDRESS, account: Number(reader!.id) });
    const [dump] = await queryRows<{ text: string }>(
      hub.db.db,
      sql`select (select coalesce(json_agg(m), '[]') from skill_use_marks m)::text || (select coalesce(json_agg(c), '[]') from skill_use_clients c)::text || (select coalesce(json_agg(u), '[]') from skill_uses u)::text as text`,
    );
    const text = dump!.text;
    expect(text).toContain('client_hash');
    for (const secret of [ADDRESS, tokens.reader, 'private-eye', digest, clientDigest({ ip: ADDRESS })]) {
      expect(text).not.toContain(secret);
    }
    expect(await usesRow(ROLLBACK)).toBe(2);
  });

  it('counts people, not headers: 600 HEADs with rotating User-Agent from one address add 1 use', async () => {
    const identity = 'hub:team/kit/format';
    const before = await usesRow(identity);
    const answers = new Set<number>();
    for (let i = 0; i < 600; i++) {
      const res = await hub.app.inject({
        method: 'HEAD',
        url: `/v1/skills/${identity}`,
        remoteAddress: '192.0.2.66',
        headers: {
          'user-agent': `rotating-agent/${i}`,
          ...(i % 3 === 0 ? { 'accept-language': `x-${i}` } : {}),
        },
      });
      answers.add(res.statusCode);
    }
    expect([...answers]).toEqual([200]);
    await hub.app.uses.flush();
    expect(await usesRow(identity)).toBe(before + 1);
    // One account is one person on any address; a second address without a token is another.
    for (const remoteAddress of ['192.0.2.67', '192.0.2.68']) {
      await hub.app.inject({
        method: 'HEAD',
        url: `/v1/skills/${identity}`,
        remoteAddress,
        headers: { authorization: `Bearer ${tokens.publisher}`, 'user-agent': remoteAddress },
      });
    }
    await hub.app.inject({ method: 'HEAD', url: `/v1/skills/${identity}`, remoteAddress: '192.0.2.69' });
    await hub.app.uses.flush();
    expect(await usesRow(identity)).toBe(before + 3);
  });

  it("shows a private skill's uses to its team only", async () => {
    const reader = { authorization: `Bearer ${tokens.reader}` };
    const outsider = { authorization: `Bearer ${tokens.outsider}` };
    const read = await hub.app.inject({ method: 'GET', url: `/v1/skills/${PRIVATE}`, headers: reader });
    expect(read.statusCode).toBe(200);
    await hub.app.uses.flush();
    expect(await uses(PRIVATE, reader)).toEqual({ week: 1, total: 1 });
    for (const headers of [{}, outsider]) {
      const res = await hub.app.inject({ method: 'GET', url: `/v1/skills/${PRIVATE}`, headers });
      expect(res.statusCode).toBe(404);
      expect(res.body).not.toContain('"uses"');
      const search = await hub.app.inject({ method: 'GET', url: '/search?q=deploy+secret', headers });
      expect(search.body).not.toContain(PRIVATE);
      const badge = await hub.app.inject({ method: 'GET', url: `/badge/${PRIVATE}.svg`, headers });
      expect(badge.statusCode).toBe(404);
    }
  });
});

describe('uses in Redis (HyperLogLog)', () => {
  let redisHub: TestHub;
  let redis: Redis;
  let url: string;
  const prefix = uniqueQueuePrefix('uses');

  beforeAll(async () => {
    url = await redisUrl();
    redis = new Redis(url);
    redisHub = await createTestHub('uses_redis', {}, { uses: { redis, keyPrefix: prefix, capPerClient: 2 } });
    await insertSkills(redisHub.db.db, webFixtures());
  });

  afterAll(async () => {
    await redisHub?.close();
    await dropQueuePrefix(url, prefix);
    redis?.disconnect();
  });

  it('counts distinct clients with the cap, keeps only the daily count in the database, expires the rest', async () => {
    const app = redisHub.app;
    for (const n of [1, 2, 3, 1, 1]) {
      await app.inject({ method: 'GET', url: `/v1/skills/${DEPLOY}`, ...client(n) });
    }
    for (const identity of [ROLLBACK, 'hub:team/kit/lint', 'hub:team/kit/format']) {
      await app.inject({ method: 'GET', url: `/v1/skills/${identity}`, ...client(1) });
    }
    await app.uses.flush();
    const rows = await queryRows<{ identity: string; uses: number }>(
      redisHub.db.db,
      sql`select s.identity, u.uses from skill_uses u join skills s on s.id = u.skill_id order by s.identity`,
    );
    expect(rows).toEqual([
      { identity: DEPLOY, uses: 3 },
      { identity: ROLLBACK, uses: 1 },
    ]);
    const keys = await redis.keys(`${prefix}:*`);
    expect(keys.some((k) => k.includes(':salt:'))).toBe(true);
    for (const key of keys) expect(await redis.ttl(key)).toBeGreaterThan(0);
    const stored = (
      await Promise.all(keys.filter((k) => !k.includes(':skill:')).map((k) => redis.dump(k)))
    ).join('');
    expect(stored).not.toContain('atskills-test');
    expect(await redisHub.db.db.execute(sql`select count(*)::int as n from skill_use_marks`)).toMatchObject({
      rows: [{ n: 0 }],
    });
  });
});
