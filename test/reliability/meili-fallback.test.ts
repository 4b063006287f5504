/**
 * Issue 8, faults: "With Meilisearch configured and then unreachable: search falls back to the Postgres
 * engine and says so in a response header; the Meilisearch index is rebuilt from Postgres when it
 * returns." Unreachable here is real: MEILI_URL names a port on 127.0.0.1 that nothing listens on (no
 * fake server). The "rebuilt when it returns" half needs a real Meilisearch, which this machine does not
 * have; it runs only when RELIABILITY_MEILI_URL points at one.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../apps/api/src/app.js';
import { loadConfig } from '../../apps/api/src/config.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { unusedPort } from '../support/ports.js';
import { startTcpProxy, upstreamOf } from '../support/tcp-proxy.js';
import { crawlInProcess, type SkillRepos, startSkillRepos } from './helpers.js';

interface SearchBody {
  results: { identity: string }[];
  nextCursor: string | null;
}

let db: TestDatabase;
let repos: SkillRepos;
let app: FastifyInstance;

beforeAll(async () => {
  db = await createTestDatabase('meili_fallback');
  repos = await startSkillRepos(3);
  await crawlInProcess(db.db, repos);
  app = await buildApp(
    loadConfig({
      DATABASE_URL: db.url,
      MEILI_URL: `http://127.0.0.1:${await unusedPort()}`,
      MEILI_MASTER_KEY: 'not-a-real-key-0123456789',
      LOG_LEVEL: 'silent',
    }),
  );
});

afterAll(async () => {
  await app?.close();
  await repos?.close();
  await db?.drop();
});

describe('Meilisearch configured but unreachable', () => {
  it('answers search from Postgres and says so in X-Search-Engine', async () => {
    const res = await app.inject('/search?q=deploy');
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-search-engine']).toBe('postgres; fallback');
    const body = res.json() as SearchBody;
    expect(body.results.map((r) => r.identity)).toEqual(
      expect.arrayContaining([
        'gh:relia-org/repo-0/skills/deploy-0',
        'gh:relia-org/repo-1/skills/deploy-1',
        'gh:relia-org/repo-2/skills/deploy-2',
      ]),
    );
  });

  it('the same under /v1/search, with filters', async () => {
    const res = await app.inject('/v1/search?q=review&owner=relia-org&repo=repo-2');
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-search-engine']).toBe('postgres; fallback');
    expect((res.json() as SearchBody).results.map((r) => r.identity)).toContain(
      'gh:relia-org/repo-2/skills/review-2',
    );
  });

  it('pages through the fallback results with the cursor it handed out', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10; page++) {
      const url: string = `/search?q=deploy&limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res = await app.inject(url);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['x-search-engine']).toBe('postgres; fallback');
      const body = res.json() as SearchBody;
      seen.push(...body.results.map((r) => r.identity));
      cursor = body.nextCursor;
      if (!cursor) break;
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(
      expect.arrayContaining([
        'gh:relia-org/repo-0/skills/deploy-0',
        'gh:relia-org/repo-1/skills/deploy-1',
        'gh:relia-org/repo-2/skills/deploy-2',
      ]),
    );
  });

  it('resolution does not depend on the search engine at all', async () => {
    const res = await app.inject('/v1/skills/gh:relia-org/repo-0/skills/deploy-0');
    expect(res.statusCode).toBe(200);
  });

  // Needs a real Meilisearch (there is none on this machine, and no fake one is written): set
  // RELIABILITY_MEILI_URL (and RELIABILITY_MEILI_KEY) to run it. It cuts the engine with the TCP proxy,
  // indexes a repository meanwhile, restores it and expects the index rebuilt from Postgres.
  it.skipIf(!process.env.RELIABILITY_MEILI_URL)(
    'rebuilds the Meilisearch index from Postgres when it returns (skipped: needs RELIABILITY_MEILI_URL)',
    async () => {
      const meiliUrl = process.env.RELIABILITY_MEILI_URL as string;
      const proxy = await startTcpProxy(upstreamOf(meiliUrl));
      const withMeili = await buildApp(
        loadConfig({
          DATABASE_URL: db.url,
          MEILI_URL: `http://127.0.0.1:${proxy.port}`,
          MEILI_MASTER_KEY: process.env.RELIABILITY_MEILI_KEY ?? '',
          MEILI_INDEX: `relia_${Date.now()}`,
          LOG_LEVEL: 'silent',
        }),
      );
      try {
        const engine = withMeili.searchEngine as unknown as { rebuild(): Promise<{ documents: number }> };
        await engine.rebuild();
        expect((await withMeili.inject('/search?q=deploy')).headers['x-search-engine']).toBe('meilisearch');
        await proxy.cut('refuse');
        expect((await withMeili.inject('/search?q=deploy')).headers['x-search-engine']).toBe(
          'postgres; fallback',
        );
        await proxy.restore();
        // Back: the engine notices on its next use and rebuilds from Postgres before answering again.
        let engineName: string | undefined;
        for (let i = 0; i < 50 && engineName !== 'meilisearch'; i++) {
          engineName = (await withMeili.inject('/search?q=deploy')).headers['x-search-engine'] as string;
          if (engineName !== 'meilisearch') await new Promise((r) => setTimeout(r, 200));
        }
        expect(engineName).toBe('meilisearch');
      } finally {
        await withMeili.close();
        await proxy.close();
      }
    },
  );
});
