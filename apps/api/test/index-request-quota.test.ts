/**
 * Issue 24, finding 13: made-up repository names in index requests. GitHub's 404 is remembered for a
 * while (no new crawl, run or GitHub call for the same name), the crawls of names the hub never indexed
 * spend GitHub's quota per caller, and once the 404 is old its rows go.
 */
import { crawlRuns, indexRequests, repositories } from '@atskills/db';
import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { type CrawlingHub, skillFile, startCrawlingHub, until } from './support/crawling-hub.js';

const TTL_S = 3;
const PER_CALLER = 4;

let hub: CrawlingHub;
let app: FastifyInstance;

beforeAll(async () => {
  hub = await startCrawlingHub(
    'index-quota',
    { 'real/one': { 'SKILL.md': skillFile('one', 'A real skill.') } },
    { INDEX_NOT_FOUND_TTL_S: String(TTL_S), INDEX_NEW_REPOS_PER_HOUR: String(PER_CALLER) },
  );
  app = hub.app;
  const runId = await hub.crawler.startRun({ kind: 'repos', source: { kind: 'repos', repos: ['real/one'] } });
  await hub.crawler.waitForRun(runId, { pollMs: 50 });
}, 120_000);

afterAll(async () => {
  await hub?.close();
});

const ask = (repo: string, ip = '203.0.113.7') =>
  app.inject({ method: 'POST', url: '/v1/index-requests', payload: { repo }, remoteAddress: ip });

const count = async (table: typeof repositories | typeof crawlRuns | typeof indexRequests) =>
  (await hub.db.db.select({ n: sql<number>`count(*)::int` }).from(table))[0]!.n;

const githubCalls = (name: string) => hub.standin.apiLog.filter((e) => e.path.includes(name)).length;

const settled = (fullName: string) =>
  until(
    async () => (await app.inject({ url: `/v1/repos/${fullName}` })).json(),
    (s) => s.request === null && (s.status === 'failed' || s.status === 'indexed'),
  );

describe('made-up repository names', () => {
  it('asks GitHub once; the same name again is answered from the hub until the 404 is old', async () => {
    expect((await ask('nobody/made-up-0')).statusCode).toBe(202);
    expect((await settled('nobody/made-up-0')).problems[0].code).toBe('repository-not-found');
    const calls = githubCalls('made-up-0');
    expect(calls).toBe(1);
    const rows = [await count(repositories), await count(crawlRuns), await count(indexRequests)];
    const answers = [];
    for (let i = 0; i < 20; i++) answers.push(await ask('nobody/made-up-0', `198.51.100.${i + 1}`));
    expect(answers.map((a) => a.statusCode)).toEqual(Array(20).fill(404));
    expect(answers[0]!.json()).toMatchObject({ code: 'not-found', reason: 'repository-not-found' });
    expect(Number(answers[0]!.headers['retry-after'])).toBeGreaterThan(0);
    expect(githubCalls('made-up-0')).toBe(calls);
    expect([await count(repositories), await count(crawlRuns), await count(indexRequests)]).toEqual(rows);
  });

  it('spends GitHub quota per caller: a caller past its hour gets 429, another caller does not', async () => {
    const codes = [];
    for (let i = 1; i <= PER_CALLER + 2; i++)
      codes.push((await ask(`nobody/quota-${i}`, '192.0.2.50')).statusCode);
    expect(codes).toEqual([...Array(PER_CALLER).fill(202), 429, 429]);
    const refused = await ask('nobody/quota-99', '192.0.2.50');
    expect(refused.headers['retry-after']).toBeDefined();
    expect(refused.json().code).toBe('rate-limited');
    // The refused names cost no GitHub call and left no request behind.
    expect(githubCalls('quota-99')).toBe(0);
    expect((await app.inject({ url: '/v1/repos/nobody/quota-99' })).json().status).toBe('not-indexed');
    expect((await ask('nobody/quota-other', '192.0.2.51')).statusCode).toBe(202);
    // A repository the hub knows is not charged: re-indexing stays open to the spent caller.
    await settled('nobody/quota-other');
    expect((await ask('real/one', '192.0.2.50')).statusCode).toBe(202);
    await settled('real/one');
    for (let i = 1; i <= PER_CALLER; i++) await settled(`nobody/quota-${i}`);
    await settled('nobody/quota-other');
  });

  it('forgets a name once its 404 is older than the TTL: no permanent row, run or request', async () => {
    await new Promise((r) => setTimeout(r, (TTL_S + 1) * 1000));
    // Pruning runs at most once a minute per process: a fresh app over the same database prunes at once.
    const fresh = await buildApp(
      loadConfig({ LOG_LEVEL: 'silent', INDEX_NOT_FOUND_TTL_S: String(TTL_S), READ_CACHE_MB: '0' }),
      { database: hub.db, queue: hub.crawler },
    );
    try {
      const res = await fresh.inject({
        method: 'POST',
        url: '/v1/index-requests',
        payload: { repo: 'real/one' },
      });
      expect(res.statusCode).toBe(202);
      await settled('real/one');
      const names = await hub.db.db
        .select({ name: repositories.name })
        .from(repositories)
        .where(sql`${repositories.owner} = 'nobody'`);
      expect(names).toEqual([]);
      const requests = await hub.db.db
        .select({ name: indexRequests.name })
        .from(indexRequests)
        .where(sql`${indexRequests.owner} = 'nobody'`);
      expect(requests).toEqual([]);
      const runs = await hub.db.db
        .select({ n: sql<number>`count(*)::int` })
        .from(crawlRuns)
        .where(
          sql`${crawlRuns.kind} = 'request' and not exists (select 1 from crawl_reports c where c.run_id = ${crawlRuns.id})`,
        );
      expect(runs[0]!.n).toBe(0);
    } finally {
      await fresh.close();
    }
  });
});
