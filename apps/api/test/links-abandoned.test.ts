// A link index job whose workers die holding it more often than BullMQ's stall limit (maxStalledCount 2) is
// failed by the next worker without running again. The link must not show `indexing` for ever: it is marked
// failed and its owners told, and an App link its marker never allowed is told only the one refusal. The job
// is held the way a dying worker holds it (test/support/stalled-jobs.ts).

import { type Crawler, createCrawler, createLogger } from '@atskills/crawler';
import { setLinkStatus } from '@atskills/db';
import { jobIds, QUEUES } from '@atskills/queue';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skillMd } from '../../../test/fixtures/archives/make.js';
import { redisUrl } from '../../../test/support/redis.js';
import { stallPastLimit } from '../../../test/support/stalled-jobs.js';
import { createLinkedHub, type LinkedHub, link, linkWithApp } from './links-fixtures.js';
import { auth, seedTeam, type Tokens } from './teams-fixtures.js';

let t: LinkedHub;
let tokens: Tokens;
let redis: string;
let second: Crawler | undefined;

beforeAll(async () => {
  redis = await redisUrl();
  t = await createLinkedHub('links_abandoned', {}, 'bullmq');
  tokens = await seedTeam(t.hub.db.db, 'acme');
  await t.addRepo('acme-gh/playbooks', { 'deploy/SKILL.md': skillMd('deploy', 'Deploy acme safely.') });
  await t.addRepo('acme-gh/unmarked', { 'x/SKILL.md': skillMd('x', 'No marker names a team here.') });
  t.github.install('acme-gh', ['acme-gh/unmarked']);
}, 120_000);

afterAll(async () => {
  await second?.close();
  await t?.close();
});

const view = async (collection: string) =>
  (
    await t.app.inject({
      method: 'GET',
      url: `/v1/teams/acme/links/${collection}`,
      headers: auth(tokens, 'owner'),
    })
  ).json();

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('a link job stalled past the limit', () => {
  it('marks a link left indexing failed (index-abandoned), tells its owners, and keeps the last good revision', async () => {
    const token = t.github.issueToken(['acme-gh/playbooks']);
    const created = await link(
      t.app,
      'acme',
      { repo: 'acme-gh/playbooks', collection: 'playbooks', credential: { kind: 'token', token } },
      auth(tokens, 'owner'),
    );
    expect(created.statusCode, created.body).toBe(201);
    expect((await view('playbooks')).status).toBe('indexed');
    const refused = await linkWithApp(t.app, 'acme', 'acme-gh/unmarked', 'unmarked', auth(tokens, 'owner'));
    expect(refused.statusCode, refused.body).toBe(201);
    expect((await view('unmarked')).failure.code).toBe('link-not-authorized');
    const refusal = (await view('unmarked')).failure.message;

    // The hub's own crawler stops; the next index of each link dies with its workers mid-way (status indexing).
    await t.crawler.close();
    const ids = await linkIds();
    const stalled = [ids.get('playbooks')!, ids.get('unmarked')!];
    for (const id of stalled) await setLinkStatus(t.hub.db.db, id, 'indexing', new Date());
    await stallPastLimit(redis, t.crawlerSettings.crawlQueuePrefix, QUEUES.link.name, async (queue) => {
      for (const linkId of stalled) {
        await queue.add(
          'index',
          { linkId, force: false },
          { jobId: jobIds.link(linkId, Date.now(), 'dying') },
        );
      }
      return stalled.length;
    });
    // A crawler started afterwards fails the jobs (stalled past the limit) and settles both links.
    second = createCrawler({
      db: t.hub.db.db,
      settings: t.crawlerSettings,
      logger: createLogger('silent'),
      linkAccess: t.access,
      redis,
    });
    const playbooks = await until(
      () => view('playbooks'),
      (v) => v.status === 'failed',
    );
    expect(playbooks).toMatchObject({
      status: 'failed',
      failure: {
        code: 'index-abandoned',
        message: 'The index job ended without a result: job stalled more than allowable limit',
      },
    });
    expect(playbooks.headCommit).toMatch(/^[0-9a-f]{40}$/);
    const skill = await t.app.inject({
      method: 'GET',
      url: '/v1/skills/hub:acme/playbooks/deploy',
      headers: auth(tokens, 'reader'),
    });
    expect(skill.statusCode).toBe(200);
    const audit = (await t.hub.db.db.execute(
      `select details from audit_log where action = 'link.failed' and target = 'hub:acme/playbooks'` as never,
    )) as unknown as { rows: { details: { code: string } }[] };
    expect(audit.rows.map((r) => r.details.code)).toContain('index-abandoned');

    // The App link its marker never allowed learns nothing new: the same refusal, not why the job ended.
    const unmarked = await until(
      () => view('unmarked'),
      (v) => v.status === 'failed',
    );
    expect(unmarked).toMatchObject({ status: 'failed', failure: { code: 'link-not-authorized' } });
    expect(unmarked.failure.message).toBe(refusal);
  }, 120_000);
});

async function linkIds(): Promise<Map<string, number>> {
  const rows = (await t.hub.db.db.execute(
    'select l.id, c.name from repository_links l join collections c on c.id = l.collection_id' as never,
  )) as unknown as { rows: { id: string; name: string }[] };
  return new Map(rows.rows.map((r) => [r.name, Number(r.id)]));
}
