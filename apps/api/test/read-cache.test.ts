import { skills } from '@atskills/db';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestHub, type TestHub } from './support/app.js';
import { seedPrivateCollection, seedRepository, skillMd } from './support/seed.js';
import { auth, seedTeam, type Tokens } from './teams-fixtures.js';

// The read cache against a real Postgres: answers come from memory only while the change feed (LISTEN on
// the trigger's NOTIFY) is up, and every write, by whoever, drops them before the next read.

let hub: TestHub;
let tokens: Tokens;

/** Waits until `check` holds (the NOTIFY travels on its own connection). */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Runs a write straight on the database and waits for the hub to hear of it. */
async function writeAndWaitForNotify(write: () => Promise<unknown>): Promise<void> {
  const before = hub.app.readCache.counters.flushes;
  await write();
  await until(() => hub.app.readCache.counters.flushes > before, 'the index change notification');
}

beforeAll(async () => {
  hub = await createTestHub('read_cache', { READ_CACHE_MB: '4' });
  await seedRepository(hub.db.db, 'acme', 'kit', {
    'alpha/SKILL.md': skillMd('alpha-deploy', 'Deploy the alpha service'),
    'beta/SKILL.md': skillMd('beta-review', 'Review beta changes'),
  });
  tokens = await seedTeam(hub.db.db, 'vault');
  await seedPrivateCollection(hub.db.db, 'vault', 'secrets', {
    'SKILL.md': skillMd('alpha-vault', 'Private alpha runbook'),
  });
  await until(() => hub.app.readCache.enabled, 'the change feed to listen');
  // The seed writes' notifications may still be on their way (late on a loaded machine): wait until the
  // feed has been quiet for a while, so none of them drops a page between two requests of a test.
  let flushes = -1;
  while (flushes !== hub.app.readCache.counters.flushes) {
    flushes = hub.app.readCache.counters.flushes;
    await new Promise((r) => setTimeout(r, 300));
  }
}, 60_000);

afterAll(async () => {
  await hub?.close();
});

describe('read cache', () => {
  it('serves a repeated search from memory, byte for byte', async () => {
    const first = await hub.app.inject({ url: '/v1/search?q=alpha' });
    expect(first.statusCode).toBe(200);
    const hitsBefore = hub.app.readCache.counters.hits;
    const second = await hub.app.inject({ url: '/v1/search?q=alpha' });
    expect(hub.app.readCache.counters.hits).toBe(hitsBefore + 1);
    expect(second.statusCode).toBe(200);
    expect(second.body).toBe(first.body);
    expect(second.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(second.headers['x-search-engine']).toBe('postgres');
    expect(second.json().results.map((r: { name: string }) => r.name)).toEqual(['alpha-deploy']);
  });

  it('keeps private rows to the scopes that may read them', async () => {
    const member = await hub.app.inject({ url: '/v1/search?q=alpha', headers: auth(tokens, 'reader') });
    expect(
      member
        .json()
        .results.map((r: { name: string }) => r.name)
        .sort(),
    ).toEqual(['alpha-deploy', 'alpha-vault']);
    const anonymous = await hub.app.inject({ url: '/v1/search?q=alpha' });
    expect(anonymous.json().results.map((r: { name: string }) => r.name)).toEqual(['alpha-deploy']);
  });

  it('drops cached search pages when another process writes the index', async () => {
    await hub.app.inject({ url: '/v1/search?q=review' });
    await writeAndWaitForNotify(() =>
      hub.db.db
        .update(skills)
        .set({ description: 'Review gamma changes' })
        .where(eq(skills.name, 'beta-review')),
    );
    const after = await hub.app.inject({ url: '/v1/search?q=review' });
    expect(after.json().results[0].description).toBe('Review gamma changes');
  });

  it('answers If-None-Match and HEAD from the cached revision, and sees a new revision at once', async () => {
    const identity = 'gh:acme/kit/alpha';
    const full = await hub.app.inject({ url: `/v1/skills/${identity}` });
    expect(full.statusCode).toBe(200);
    const etag = String(full.headers.etag);

    const probe = await hub.app.inject({ url: `/v1/skills/${identity}`, headers: { 'if-none-match': etag } });
    expect(probe.statusCode).toBe(304);
    const hitsBefore = hub.app.readCache.counters.hits;
    const again = await hub.app.inject({ url: `/v1/skills/${identity}`, headers: { 'if-none-match': etag } });
    expect(again.statusCode).toBe(304);
    expect(hub.app.readCache.counters.hits).toBe(hitsBefore + 1);

    const head = await hub.app.inject({ method: 'HEAD', url: `/v1/skills/${identity}` });
    expect(head.statusCode).toBe(200);
    expect(head.headers.etag).toBe(etag);
    expect(head.headers['cache-control']).toBe('no-cache');
    expect(head.body).toBe('');

    // A new revision written elsewhere (a crawl): the old ETag no longer matches.
    await writeAndWaitForNotify(() =>
      seedRepository(hub.db.db, 'acme', 'kit', {
        'alpha/SKILL.md': skillMd('alpha-deploy', 'Deploy the alpha service, now with rollbacks'),
        'beta/SKILL.md': skillMd('beta-review', 'Review beta changes'),
      }),
    );
    const changed = await hub.app.inject({
      url: `/v1/skills/${identity}`,
      headers: { 'if-none-match': etag },
    });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
    expect(changed.json().description).toBe('Deploy the alpha service, now with rollbacks');
    const headAfter = await hub.app.inject({ method: 'HEAD', url: `/v1/skills/${identity}` });
    expect(headAfter.headers.etag).toBe(changed.headers.etag);
  });

  it('answers unchanged batch items from the cached revisions, and sees a change at once', async () => {
    const identity = 'gh:acme/kit/beta';
    const etag = String((await hub.app.inject({ url: `/v1/skills/${identity}` })).headers.etag);
    const revision = etag.replace(/"/g, '');
    const resolve = () =>
      hub.app.inject({ method: 'POST', url: '/v1/resolve', payload: { items: [{ identity, revision }] } });
    expect((await resolve()).json().items[0]).toMatchObject({ status: 'unchanged', revision });
    const hitsBefore = hub.app.readCache.counters.hits;
    expect((await resolve()).json().items[0]).toMatchObject({ status: 'unchanged', revision });
    expect(hub.app.readCache.counters.hits).toBe(hitsBefore + 1);
    await writeAndWaitForNotify(() =>
      seedRepository(hub.db.db, 'acme', 'kit', {
        'alpha/SKILL.md': skillMd('alpha-deploy', 'Deploy the alpha service, now with rollbacks'),
        'beta/SKILL.md': skillMd('beta-review', 'Review beta changes, carefully'),
      }),
    );
    expect((await resolve()).json().items[0]).toMatchObject({ status: 'changed', kind: 'skill' });
  });

  it('answers HEAD on a menu like its GET, with the Content-Length of the body it leaves out', async () => {
    const get = await hub.app.inject({ url: '/v1/skills/gh:acme/kit' });
    expect(get.statusCode).toBe(200);
    const head = await hub.app.inject({ method: 'HEAD', url: '/v1/skills/gh:acme/kit' });
    expect(head.statusCode).toBe(200);
    expect(head.headers.etag).toBe(get.headers.etag);
    expect(head.headers['content-length']).toBe(String(Buffer.byteLength(get.body)));
    expect(head.body).toBe('');
  });

  it('serves nothing from memory while the change feed is down, and resumes when it is back', async () => {
    await hub.app.inject({ url: '/v1/search?q=deploy' });
    // Cut the listening connection the way a failover or a network cut would.
    await hub.db.db.execute(
      sql`select pg_terminate_backend(pid) from pg_stat_activity
          where datname = current_database() and application_name like '%-listen'`,
    );
    await until(() => !hub.app.readCache.enabled, 'the feed to be reported lost');

    // Written while nobody listens: no notification will ever come for it.
    await hub.db.db
      .update(skills)
      .set({ description: 'Deploy the alpha service, feed down' })
      .where(eq(skills.name, 'alpha-deploy'));
    const whileDown = await hub.app.inject({ url: '/v1/search?q=deploy' });
    expect(whileDown.json().results[0].description).toBe('Deploy the alpha service, feed down');

    await until(() => hub.app.readCache.enabled, 'the feed to listen again');
    const afterReconnect = await hub.app.inject({ url: '/v1/search?q=deploy' });
    expect(afterReconnect.json().results[0].description).toBe('Deploy the alpha service, feed down');
  });

  it('counts hits, misses and flushes in /metrics', async () => {
    const metrics = await hub.app.inject({ url: '/metrics' });
    expect(metrics.statusCode).toBe(200);
    const hit = metrics.body.match(/^atskills_read_cache_total\{outcome="hit"\} (\d+)$/m);
    const flush = metrics.body.match(/^atskills_read_cache_total\{outcome="flush"\} (\d+)$/m);
    expect(Number(hit?.[1])).toBeGreaterThanOrEqual(2);
    expect(Number(flush?.[1])).toBeGreaterThanOrEqual(3);
  });
});
