/**
 * POST /v1/webhooks/github end to end: signed deliveries from test/support/github-webhooks.ts, the hub
 * with a real in-process crawler over the GitHub stand-in. Verification and idempotency, a push that is
 * searchable within seconds, and the repository events (renamed, transferred, deleted, privatized,
 * publicized) with the 301s old identities answer on every read route.
 */
import { skillRevisions, skills, webhookDeliveries } from '@atskills/db';
import { eq, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitToRepo } from '../../../test/support/corpus.js';
import {
  pushPayload,
  repositoryPayload,
  webhookRepository,
  webhookRequest,
} from '../../../test/support/github-webhooks.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { type CrawlingHub, skillFile, startCrawlingHub, until } from './support/crawling-hub.js';

const SECRET = 'whsec-test-0123456789abcdef';
const skill = skillFile;

let hub: CrawlingHub;
let app: FastifyInstance;
let db: CrawlingHub['db'];
let standin: CrawlingHub['standin'];
let crawler: CrawlingHub['crawler'];
let opsWorkDir: string;

beforeAll(async () => {
  hub = await startCrawlingHub(
    'webhooks',
    {
      'acme/ops': {
        'deploy/SKILL.md': skill('deploy', 'Deploys the service.'),
        'rollback/SKILL.md': skill('rollback', 'Rolls back a release.'),
      },
      'acme/gone-soon': { 'SKILL.md': skill('gone-soon', 'Will be deleted.') },
      'acme/secretive': { 'SKILL.md': skill('secretive', 'Will go private.') },
    },
    { GITHUB_WEBHOOK_SECRET: SECRET },
  );
  ({ app, db, standin, crawler } = hub);
  opsWorkDir = hub.workDirs.get('acme/ops')!;
  const runId = await crawler.startRun({
    kind: 'repos',
    source: { kind: 'repos', repos: ['acme/ops', 'acme/gone-soon', 'acme/secretive'] },
  });
  await crawler.waitForRun(runId, { pollMs: 50 });
}, 120_000);

afterAll(async () => {
  await hub?.close();
});

function deliver(event: string, payload: unknown, options: Parameters<typeof webhookRequest>[3] = {}) {
  const { headers, body } = webhookRequest(SECRET, event, payload, options);
  return app.inject({ method: 'POST', url: '/v1/webhooks/github', headers, payload: body });
}

const deliveries = async () => (await db.db.select().from(webhookDeliveries)).length;

describe('verification', () => {
  it('answers 401 to a missing, wrong or stale signature and records nothing', async () => {
    const payload = pushPayload(webhookRepository('acme/ops'));
    const before = await deliveries();
    for (const signature of [null, 'sha256=0000', `sha256=${'a'.repeat(64)}`, 'sha1=deadbeef']) {
      const res = await deliver('push', payload, { signature });
      expect(res.statusCode, String(signature)).toBe(401);
      expect(res.json().code).toBe('bad-signature');
    }
    // Signed with an older secret (stale), and a body changed after signing.
    const stale = webhookRequest('an-older-secret-0123456789', 'push', payload);
    expect(
      (
        await app.inject({
          method: 'POST',
          url: '/v1/webhooks/github',
          headers: stale.headers,
          payload: stale.body,
        })
      ).statusCode,
    ).toBe(401);
    const signed = webhookRequest(SECRET, 'push', payload);
    const tampered = signed.body.replace('acme/ops', 'acme/evil');
    expect(
      (
        await app.inject({
          method: 'POST',
          url: '/v1/webhooks/github',
          headers: signed.headers,
          payload: tampered,
        })
      ).statusCode,
    ).toBe(401);
    expect(await deliveries()).toBe(before);
  });

  it('answers 400 to a signed body that is not JSON, and 503 when no secret is configured', async () => {
    for (const body of ['not json', '[1,2]', '']) {
      const res = await deliver('push', null, { body });
      expect(res.statusCode, body).toBe(400);
      expect(res.json().code).toBe('bad-request');
    }
    const unconfigured = await buildApp(loadConfig({ LOG_LEVEL: 'silent' }), {
      database: db,
      queue: crawler,
    });
    try {
      const { headers, body } = webhookRequest(SECRET, 'ping', { zen: 'hi' });
      const res = await unconfigured.inject({
        method: 'POST',
        url: '/v1/webhooks/github',
        headers,
        payload: body,
      });
      expect(res.statusCode).toBe(503);
    } finally {
      await unconfigured.close();
    }
  });

  it('handles a delivery once: a replay is a duplicate and changes nothing', async () => {
    const payload = repositoryPayload('edited', webhookRepository('acme/ops'));
    const first = await deliver('repository', payload, { deliveryId: 'delivery-replayed-1' });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({ outcome: 'ignored' });
    const again = await deliver('repository', payload, { deliveryId: 'delivery-replayed-1' });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ outcome: 'duplicate', delivery: 'delivery-replayed-1' });
  });

  it('ignores events for repositories the hub does not know, pushes to other branches and private pushes', async () => {
    const unknown = await deliver(
      'repository',
      repositoryPayload('deleted', webhookRepository('nobody/nothing')),
    );
    expect(unknown.statusCode).toBe(200);
    expect(unknown.json()).toMatchObject({ outcome: 'ignored', repository: 'nobody/nothing' });
    const branch = await deliver(
      'push',
      pushPayload(webhookRepository('acme/ops'), { ref: 'refs/heads/feature' }),
    );
    expect(branch.json()).toMatchObject({ outcome: 'ignored' });
    const secret = await deliver('push', pushPayload(webhookRepository('acme/ops', { private: true })));
    expect(secret.json()).toMatchObject({ outcome: 'ignored' });
    expect((await deliver('ping', { zen: 'Keep it logically awesome.' })).json()).toMatchObject({
      detail: 'pong',
    });
  });

  it('lets other areas plug handlers in before the built-in ones', async () => {
    const seen: string[] = [];
    app.webhooks.on(
      'installation',
      async (delivery) => {
        seen.push(delivery.action ?? '');
        return { outcome: 'applied', detail: 'installation recorded' };
      },
      { prepend: true },
    );
    const res = await deliver('installation', { action: 'created', installation: { id: 1 } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ outcome: 'applied', event: 'installation' });
    expect(seen).toEqual(['created']);
  });
});

describe('push', () => {
  it('re-crawls the repository: the pushed skill is searchable within seconds', async () => {
    const after = await commitToRepo(opsWorkDir, {
      'triage/SKILL.md': skill('triage', 'Triages a pager alert.'),
    });
    const started = Date.now();
    const res = await deliver('push', pushPayload(webhookRepository('acme/ops'), { after }));
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ outcome: 'queued', repository: 'acme/ops' });
    expect(res.json().statusUrl).toMatch(/\/v1\/repos\/acme\/ops$/);
    const hits = await until(
      async () => (await app.inject({ url: '/v1/search?q=triage' })).json().results as { identity: string }[],
      (results) => results.some((r) => r.identity === 'gh:acme/ops/triage'),
    );
    expect(hits.length).toBeGreaterThan(0);
    expect(Date.now() - started).toBeLessThan(30_000);
    expect((await app.inject({ url: '/v1/repos/acme/ops' })).json().headRevision).toBe(after);
  });
});

describe('push of a repository the hub never saw', () => {
  it('asks GitHub once: a repeated push of a missing repository is ignored, not crawled again', async () => {
    const first = await deliver('push', pushPayload(webhookRepository('ghost/nothing')));
    expect(first.statusCode).toBe(202);
    await until(
      async () => (await app.inject({ url: '/v1/repos/ghost/nothing' })).json().status as string,
      (status) => status === 'failed',
    );
    const again = await deliver(
      'push',
      pushPayload(webhookRepository('ghost/nothing'), { after: 'b'.repeat(40) }),
    );
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ outcome: 'ignored', repository: 'ghost/nothing' });
    expect(again.json().detail).toMatch(/not found on GitHub/);
  });
});

describe('repository events', () => {
  it('renamed: skills, revisions and popularity move; old identities answer 301 on every read route', async () => {
    const [before] = await db.db.select().from(skills).where(eq(skills.identity, 'gh:acme/ops/deploy'));
    await standin.renameRepository('acme/ops', 'acme/platform');
    const res = await deliver(
      'repository',
      repositoryPayload(
        'renamed',
        webhookRepository('acme/platform', { id: standin.idOf('acme/platform') }),
        { name: 'ops' },
      ),
    );
    // The delivery only schedules a check: the crawl reads the repository by its id and moves it.
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ outcome: 'queued', repository: 'acme/ops' });
    const [moved] = await until(
      () => db.db.select().from(skills).where(eq(skills.id, before!.id)),
      (rows) => rows[0]?.identity === 'gh:acme/platform/deploy',
    );
    expect(moved).toMatchObject({
      identity: 'gh:acme/platform/deploy',
      stars: before!.stars,
      revision: before!.revision,
    });
    const revisions = await db.db.select().from(skillRevisions).where(eq(skillRevisions.skillId, before!.id));
    expect(revisions.length).toBeGreaterThan(0);
    const redirects: [string, string][] = [
      ['/v1/skills/gh:acme/ops/deploy', '/v1/skills/gh:acme/platform/deploy'],
      ['/v1/skills/gh%3Aacme%2Fops%2Fdeploy', '/v1/skills/gh:acme/platform/deploy'],
      ['/v1/skills/GH:ACME/OPS/deploy', '/v1/skills/gh:acme/platform/deploy'],
      ['/api/skills?prefix=gh:acme/ops/', '/api/skills?prefix=gh%3Aacme%2Fplatform%2F'],
      [
        `/v1/skills/gh:acme/ops/deploy?rev=${before!.revision}`,
        `/v1/skills/gh:acme/platform/deploy?rev=${before!.revision}`,
      ],
      ['/v1/skills/gh:acme/ops', '/v1/skills/gh:acme/platform'],
      ['/v1/archive/gh:acme/ops/deploy', '/v1/archive/gh:acme/platform/deploy'],
      ['/v1/files/gh:acme/ops/deploy?path=SKILL.md', '/v1/files/gh:acme/platform/deploy?path=SKILL.md'],
      ['/api/skills/gh:acme/ops/deploy', '/api/skills/gh:acme/platform/deploy'],
      ['/s/gh:acme/ops/deploy', '/s/gh:acme/platform/deploy'],
    ];
    for (const [from, to] of redirects) {
      const answer = await app.inject({ url: from });
      expect(answer.statusCode, from).toBe(301);
      expect(answer.headers.location, from).toBe(to);
      const head = await app.inject({ method: 'HEAD', url: from });
      expect(head.statusCode, `HEAD ${from}`).toBe(301);
    }
    const repo = await app.inject({ url: '/v1/repos/acme/ops' });
    expect(repo.statusCode).toBe(301);
    expect(repo.headers.location).toMatch(/\/v1\/repos\/acme\/platform$/);
    expect((await app.inject({ url: '/v1/skills/gh:acme/platform/deploy' })).statusCode).toBe(200);
    const search = await until(
      async () =>
        (await app.inject({ url: '/v1/search?q=deploy' })).json().results as {
          identity: string;
        }[],
      (results) => results.some((r) => r.identity === 'gh:acme/platform/deploy'),
    );
    expect(search.some((r) => r.identity.startsWith('gh:acme/ops/'))).toBe(false);
    // The batch resolve says so too, one item per identity, as GET's 301 does.
    const batch = await app.inject({
      method: 'POST',
      url: '/v1/resolve',
      payload: {
        items: [
          { identity: 'gh:acme/ops/deploy', revision: before!.revision },
          { identity: 'gh:acme/ops/no-such-skill' },
          { identity: 'gh:acme/never-was/deploy' },
        ],
      },
    });
    expect(batch.statusCode).toBe(200);
    expect(batch.json().items).toEqual([
      { identity: 'gh:acme/ops/deploy', status: 'moved', location: 'gh:acme/platform/deploy' },
      { identity: 'gh:acme/ops/no-such-skill', status: 'moved', location: 'gh:acme/platform/no-such-skill' },
      { identity: 'gh:acme/never-was/deploy', status: 'not-found' },
    ]);
  });

  it('transferred: the skills follow the new owner', async () => {
    await standin.renameRepository('acme/platform', 'newco/platform');
    const res = await deliver(
      'repository',
      repositoryPayload(
        'transferred',
        webhookRepository('newco/platform', { id: standin.idOf('newco/platform') }),
        { owner: 'acme' },
      ),
    );
    expect(res.json()).toMatchObject({ outcome: 'queued' });
    await until(
      async () => (await app.inject({ url: '/v1/skills/gh:newco/platform/rollback' })).statusCode,
      (code) => code === 200,
    );
    // Both earlier names lead to the current one.
    for (const old of ['gh:acme/platform/rollback', 'gh:acme/ops/rollback']) {
      const answer = await app.inject({ url: `/v1/skills/${old}` });
      expect(answer.statusCode, old).toBe(301);
      expect(answer.headers.location).toBe('/v1/skills/gh:newco/platform/rollback');
    }
  });

  it('deleted and privatized: the skills leave search and answer 410; publicized indexes again', async () => {
    await standin.deleteRepository('acme/gone-soon');
    const deleted = await deliver(
      'repository',
      repositoryPayload('deleted', webhookRepository('acme/gone-soon')),
    );
    expect(deleted.json()).toMatchObject({ outcome: 'queued' });
    const status = await until(
      async () => (await app.inject({ url: '/v1/repos/acme/gone-soon' })).json(),
      (answer) => answer.status === 'failed',
    );
    expect((await app.inject({ url: '/v1/skills/gh:acme/gone-soon' })).statusCode).toBe(410);
    expect(status).toMatchObject({ status: 'failed', skills: [] });
    expect(status.problems).toEqual([expect.objectContaining({ code: 'repository-not-found' })]);

    standin.setPrivate('acme/secretive', true);
    const privatized = await deliver(
      'repository',
      repositoryPayload('privatized', webhookRepository('acme/secretive', { private: true })),
    );
    expect(privatized.json()).toMatchObject({ outcome: 'queued' });
    const hiddenStatus = await until(
      async () => (await app.inject({ url: '/v1/repos/acme/secretive' })).json(),
      (answer) => answer.status === 'failed',
    );
    expect((await app.inject({ url: '/v1/skills/gh:acme/secretive' })).statusCode).toBe(410);
    // Private reads exactly as deleted to the public (SPEC 2.2): the status does not say which.
    expect(hiddenStatus.problems).toEqual(status.problems);
    // The in-memory index follows the change feed, so it may answer from before the crawl for a moment.
    const hidden = await until(
      async () =>
        (await app.inject({ url: '/v1/search?q=secretive' })).json().results as { identity: string }[],
      (results) => !results.some((r) => r.identity === 'gh:acme/secretive'),
      10_000,
    );
    expect(hidden.some((r) => r.identity === 'gh:acme/secretive')).toBe(false);

    standin.setPrivate('acme/secretive', false);
    const publicized = await deliver(
      'repository',
      repositoryPayload('publicized', webhookRepository('acme/secretive')),
    );
    expect(publicized.statusCode).toBe(202);
    await until(
      async () => (await app.inject({ url: '/v1/skills/gh:acme/secretive' })).statusCode,
      (code) => code === 200,
    );
    const rows = await db.db.select({ n: sql<number>`count(*)::int` }).from(webhookDeliveries);
    expect(rows[0]!.n).toBeGreaterThan(5);
  });
});
