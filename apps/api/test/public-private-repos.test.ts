import type { Crawler } from '@atskills/crawler';
import { repositories } from '@atskills/db';
import { eq } from 'drizzle-orm';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '../../../test/support/database.js';
import { PrivateGithub } from '../../../test/support/github-private.js';
import type { GithubStandin } from '../../../test/support/github-standin.js';
import {
  injectWebhook,
  pushPayload,
  webhookRepository,
  webhookRequest,
} from '../../../test/support/github-webhooks.js';
import { type CrawlingHub, skillFile, startCrawlingHub, until } from './support/crawling-hub.js';

const SECRET = 'whsec-private-0123456789abcdef';

let hub: CrawlingHub;
let standin: GithubStandin;
let github: PrivateGithub;
let db: TestDatabase;
let crawler: Crawler;
let app: FastifyInstance;

beforeAll(async () => {
  // The private side: repositories made private with it answer the hub's (token-less) crawler 404.
  github = new PrivateGithub();
  hub = await startCrawlingHub(
    'public_private',
    {
      'pub/wasopen': { 'skills/narwhal-sync/SKILL.md': skillFile('narwhal-sync', 'Sync the narwhals.') },
      'pub/wasflag': { 'skills/walrus-sync/SKILL.md': skillFile('walrus-sync', 'Sync the walruses.') },
      'secretco/internal': { 'ops/SKILL.md': skillFile('ops', 'Internal operations.') },
      'secretco/ondemand': { 'ops/SKILL.md': skillFile('ops', 'Internal operations.') },
    },
    { GITHUB_WEBHOOK_SECRET: SECRET },
    { private: github },
  );
  ({ standin, db, crawler, app } = hub);
  // These two are private in GitHub's answer while the hub's token still reads them (an organization
  // member's token): the hub knows they exist and must not say so.
  standin.setPrivate('secretco/internal', true);
  standin.setPrivate('secretco/ondemand', true);
  const runId = await crawler.startRun({
    kind: 'repos',
    source: { kind: 'repos', repos: ['pub/wasopen', 'pub/wasflag'] },
  });
  await crawler.waitForRun(runId, { pollMs: 50 });
}, 120_000);

afterAll(async () => {
  await hub?.close();
});

const status = async (fullName: string) => (await app.inject({ url: `/v1/repos/${fullName}` })).json();
const settled = (fullName: string) =>
  until(
    () => status(fullName),
    (s) => s.request === null && s.status !== 'queued' && s.status !== 'crawling',
  );

/**
 * An answer with the repository's name replaced by a placeholder, and what differs between any two
 * requests (times, durations, request ids, per-request headers) blanked.
 */
function normalized(res: LightMyRequestResponse, fullName: string): string {
  const [owner = '', name = ''] = fullName.split('/');
  const headers = Object.entries(res.headers)
    .filter(([k]) => !['date', 'x-request-id', 'content-length', 'etag', 'server-timing'].includes(k))
    .map(([k, v]) => `${k}: ${k === 'retry-after' ? 'N' : String(v)}`)
    .sort();
  return [res.statusCode, ...headers, '', res.body]
    .join('\n')
    .replaceAll(fullName, '<repo>')
    .replaceAll(encodeURIComponent(fullName), '<repo>')
    .replaceAll(`${owner}%2F${name}`, '<repo>')
    .replaceAll(name, '<name>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
    .replace(/"durationMs":\d+/g, '"durationMs":0')
    .replace(/"requestId":"[^"]*"/g, '"requestId":""')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<request-id>');
}

/** The same request for a private repository and a missing one answers the same bytes. */
async function expectSame(
  url: (fullName: string) => string,
  init: { method?: 'GET' | 'POST'; body?: (fullName: string) => unknown } = {},
) {
  const answers: string[] = [];
  for (const fullName of ['secretco/internal', 'secretco/nothing']) {
    const res = await app.inject({
      method: init.method ?? 'GET',
      url: url(fullName),
      ...(init.body ? { payload: init.body(fullName) as object } : {}),
    });
    answers.push(normalized(res, fullName));
  }
  expect(answers[0]).toBe(answers[1]);
  return answers[0] as string;
}

describe('a private repository looks exactly like a missing one', () => {
  it('to an index request, its status, its page and a second request', async () => {
    const accepted = await expectSame(() => '/v1/index-requests', {
      method: 'POST',
      body: (repo) => ({ repo }),
    });
    expect(accepted).toMatch(/^202/);
    await settled('secretco/internal');
    await settled('secretco/nothing');
    const report = await expectSame((repo) => `/v1/repos/${repo}`);
    expect(report).toContain('repository-not-found');
    expect(report).not.toMatch(/private/i);
    const page = await expectSame((repo) => `/r/${repo}`);
    expect(page).not.toMatch(/private on GitHub/i);
    // Asked again within the not-found window: answered from the hub, still the same.
    const again = await expectSame(() => '/v1/index-requests', {
      method: 'POST',
      body: (repo) => ({ repo }),
    });
    expect(again).toMatch(/^404/);
    expect(again).not.toMatch(/private/i);
    // Operators read the truth in the crawl's error (the crawler's status command shows it).
    const [row] = await db.db
      .select({ error: repositories.lastCrawlError })
      .from(repositories)
      .where(eq(repositories.name, 'internal'));
    expect(row?.error).toMatch(/private on GitHub/);
  });

  it('to an on-demand gh: read, before and after its crawl', async () => {
    const answers: string[][] = [[], []];
    for (const [i, fullName] of ['secretco/ondemand', 'secretco/ondemand-gone'].entries()) {
      const read = () => app.inject({ url: `/v1/skills/gh:${fullName}/ops` });
      answers[i]!.push(normalized(await read(), fullName));
      await settled(fullName);
      answers[i]!.push(normalized(await read(), fullName));
      answers[i]!.push(normalized(await app.inject({ url: `/v1/repos/${fullName}` }), fullName));
      answers[i]!.push(normalized(await app.inject({ url: `/s/gh:${fullName}/ops` }), fullName));
    }
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]![0]).toMatch(/^404/);
  });
});

describe('a public repository made private, found by a push-triggered crawl', () => {
  for (const [fullName, skill, makePrivate] of [
    // GitHub answers the hub 404 (its token cannot read the repository any more).
    ['pub/wasopen', 'skills/narwhal-sync', () => github.makePrivate('pub/wasopen')],
    // GitHub answers `private: true` (the hub's token still reads it).
    ['pub/wasflag', 'skills/walrus-sync', () => standin.setPrivate('pub/wasflag', true)],
  ] as const) {
    it(`serves none of ${fullName}'s revisions, pinned or not`, async () => {
      const identity = `gh:${fullName}/${skill}`;
      const before = await app.inject({ url: `/v1/skills/${identity}` });
      expect(before.statusCode).toBe(200);
      const revision = before.json().revision as string;
      const id = standin.idOf(fullName);
      makePrivate();
      const res = await injectWebhook(
        app,
        webhookRequest(SECRET, 'push', pushPayload(webhookRepository(fullName, { id }))),
      );
      expect(res.statusCode, res.body).toBe(202);
      await settled(fullName);
      expect((await app.inject({ url: `/v1/skills/${identity}` })).statusCode).toBe(410);
      const missing = `gh:${fullName}/skills/never-there`;
      for (const route of ['/v1/skills/', '/v1/archive/']) {
        const pinned = await app.inject({ url: `${route}${identity}?rev=${revision}` });
        const absent = await app.inject({ url: `${route}${missing}?rev=${revision}` });
        expect(pinned.statusCode, `${route} ${pinned.body}`).toBe(404);
        expect(pinned.json().code).toBe(absent.json().code);
      }
      const file = await app.inject({ url: `/v1/files/${identity}?path=SKILL.md&rev=${revision}` });
      expect(file.statusCode, file.body).toBe(404);
      const page = await app.inject({ url: `/s/${identity}?rev=${revision}` });
      expect(page.statusCode).toBe(404);
      expect(page.body).not.toContain('Sync the');
      // A later crawl that fails (GitHub not answering, a timeout) learns nothing: the pins stay hidden.
      await db.db
        .update(repositories)
        .set({
          lastCrawlOutcome: 'failed',
          goneAt: null,
          problems: [{ path: '', code: 'crawl-failed', message: 'GitHub did not answer' }],
        })
        .where(eq(repositories.name, fullName.split('/')[1]!));
      expect((await app.inject({ url: `/v1/skills/${identity}?rev=${revision}` })).statusCode).toBe(404);
    });
  }
});
