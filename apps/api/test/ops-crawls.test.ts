/**
 * Crawl operations over HTTP: operators start runs that carry the request id (stored with the run and
 * handed to the queued jobs), anyone reads the crawl status. The crawler here only enqueues (BullMQ on a
 * key prefix of this file, no workers), so nothing reaches GitHub.
 */
import { type Crawler, createCrawler, settingsWith } from '@atskills/crawler';
import { crawlRuns, createUserWithNamespace, insertToken, repositories } from '@atskills/db';
import { QUEUES } from '@atskills/queue';
import { Queue } from 'bullmq';
import { eq } from 'drizzle-orm';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropQueuePrefix, redisUrl, uniqueQueuePrefix } from '../../../test/support/redis.js';
import { generateToken } from '../src/services/auth/tokens.js';
import { createTestHub, type TestHub } from './support/app.js';

let hub: TestHub;
let crawler: Crawler;
let url: string;
const prefix = uniqueQueuePrefix('ops-crawls');
const tokens: Record<'admin' | 'member', string> = { admin: '', member: '' };

async function tokenFor(name: string, isAdmin: boolean, scopes: string[]): Promise<string> {
  const { user } = await createUserWithNamespace(hub.db.db, { name, isAdmin });
  const token = generateToken();
  await insertToken(hub.db.db, {
    userId: user.id,
    label: 'test',
    prefix: token.prefix,
    hash: token.hash,
    scopes,
    expiresAt: null,
  });
  return token.secret;
}

beforeAll(async () => {
  url = await redisUrl();

  hub = await createTestHub('ops_crawls');
  crawler = createCrawler({
    db: hub.db.db,
    settings: settingsWith({ REDIS_URL: url, CRAWL_QUEUE_PREFIX: prefix }),
    logger: pino({ level: 'silent' }),
    work: false,
  });
  // The app's crawl queue: this enqueue-only crawler over the hub's own test database.
  hub.app.queue = crawler;
  tokens.admin = await tokenFor('ops-admin', true, ['read', 'admin']);
  tokens.member = await tokenFor('ops-member', false, ['read', 'publish']);
});

afterAll(async () => {
  await crawler?.close();
  await hub?.close();
  await dropQueuePrefix(url, prefix);
});

const auth = (who: keyof typeof tokens) => ({ authorization: `Bearer ${tokens[who]}` });

describe('POST /v1/crawls', () => {
  it('refuses callers without the admin scope', async () => {
    const anonymous = await hub.app.inject({
      method: 'POST',
      url: '/v1/crawls',
      payload: { repos: ['a/b'] },
    });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json().code).toBe('unauthorized');
    const member = await hub.app.inject({
      method: 'POST',
      url: '/v1/crawls',
      headers: auth('member'),
      payload: { repos: ['a/b'] },
    });
    expect(member.statusCode).toBe(403);
    expect(member.json().code).toBe('forbidden');
  });

  it('rejects a body with both or neither source, and bad repository names', async () => {
    for (const payload of [
      {},
      { repos: ['a/b'], discover: 'code-search' },
      { repos: ['not a repo'] },
      { discover: 'everything' },
    ]) {
      const response = await hub.app.inject({
        method: 'POST',
        url: '/v1/crawls',
        headers: auth('admin'),
        payload,
      });
      expect(response.statusCode, JSON.stringify(payload)).toBe(400);
      expect(response.json().code).toBe('bad-request');
    }
  });

  it('starts a run that carries the request id into the database and the queued job', async () => {
    const response = await hub.app.inject({
      method: 'POST',
      url: '/v1/crawls',
      headers: { ...auth('admin'), 'x-request-id': 'req-ops-crawl-1', origin: 'https://ops.example' },
      payload: { repos: ['gh:acme/skills', 'acme/more-skills'] },
    });
    expect(response.statusCode).toBe(202);
    const { runId, requestId } = response.json();
    expect(requestId).toBe('req-ops-crawl-1');
    expect(response.headers.location).toBe(`/v1/crawls/${runId}`);
    // A browser client follows the run by the Location it can read.
    expect(String(response.headers['access-control-expose-headers']).split(/,\s*/)).toContain('location');
    const [run] = await hub.db.db.select().from(crawlRuns).where(eq(crawlRuns.id, runId));
    expect(run).toMatchObject({ kind: 'repos', status: 'running', requestId: 'req-ops-crawl-1' });
    const queue = new Queue(QUEUES.discover.name, { connection: { url }, prefix });
    try {
      const [job] = await queue.getJobs(['waiting', 'prioritized']);
      expect(job?.data).toMatchObject({
        runId,
        requestId: 'req-ops-crawl-1',
        source: { kind: 'repos', repos: ['acme/skills', 'acme/more-skills'] },
      });
    } finally {
      await queue.close();
    }
    const progress = await hub.app.inject({ url: `/v1/crawls/${runId}`, headers: auth('admin') });
    expect(progress.statusCode).toBe(200);
    expect(progress.json()).toMatchObject({ id: runId, kind: 'repos', status: 'running' });
    const missing = await hub.app.inject({ url: '/v1/crawls/999999', headers: auth('admin') });
    expect(missing.statusCode).toBe(404);
  });
});

describe('GET /v1/crawl-status', () => {
  it('reports the last run, repositories due and failures, error texts for operators only', async () => {
    const past = new Date(Date.now() - 3_600_000);
    await hub.db.db.insert(repositories).values([
      { owner: 'acme', name: 'due', nextCrawlAt: past, lastCrawledAt: past, lastCrawlOutcome: 'indexed' },
      {
        owner: 'acme',
        name: 'broken',
        lastCrawledAt: past,
        lastCrawlOutcome: 'failed',
        lastCrawlError: 'git: connection reset',
      },
    ]);
    const anonymous = await hub.app.inject('/v1/crawl-status');
    expect(anonymous.statusCode).toBe(200);
    const body = anonymous.json();
    expect(body.lastRun).toMatchObject({ kind: 'repos', status: 'running' });
    expect(body).toMatchObject({ repositories: 2, due: 1, failuresTotal: 1 });
    expect(body.failures).toEqual([{ repository: 'acme/broken', at: past.toISOString() }]);
    const operator = await hub.app.inject({ url: '/v1/crawl-status', headers: auth('admin') });
    expect(operator.json().failures[0].error).toBe('git: connection reset');
    // The repository's status says it failed, and why only to an operator.
    const status = (await hub.app.inject('/v1/repos/acme/broken')).json();
    expect(status.problems).toEqual([expect.objectContaining({ code: 'crawl-failed' })]);
    expect(JSON.stringify(status)).not.toContain('connection reset');
    expect((await hub.app.inject('/r/acme/broken')).body).not.toContain('connection reset');
    const seen = (await hub.app.inject({ url: '/v1/repos/acme/broken', headers: auth('admin') })).json();
    expect(seen.problems[0].message).toBe('git: connection reset');
  });
});
