/**
 * Crawls written by worker processes reach the external search engine through the API's periodic sync.
 * Meilisearch cannot run here, so the engine is a recording double; the database and Redis are real.
 */
import { repositories } from '@atskills/db';
import { eq } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { dropQueuePrefix, redisUrl, uniqueQueuePrefix } from '../../../test/support/redis.js';
import { startSearchSync } from '../src/runtime/search-sync.js';
import type { SearchEngine } from '../src/search/engine.js';
import { seedRepository, skillMd } from './support/seed.js';

let database: TestDatabase;
let redis: Redis;
let url: string;
const prefix = uniqueQueuePrefix('search-sync');
const indexed: string[][] = [];
const engine: SearchEngine = {
  name: 'recording',
  search: async () => ({ hits: [], nextCursor: null, engine: { name: 'recording' } }),
  index: async (identities) => {
    indexed.push([...identities].sort());
  },
  remove: async () => {},
  health: async () => ({ ok: true }),
};

beforeAll(async () => {
  database = await createTestDatabase('ops_search_sync');
  url = await redisUrl();
  redis = new Redis(url);
  await seedRepository(database.db, 'acme', 'one', { 'a/SKILL.md': skillMd('a', 'First skill.') });
  await seedRepository(database.db, 'acme', 'two', { 'b/SKILL.md': skillMd('b', 'Second skill.') });
});

afterAll(async () => {
  redis?.disconnect();
  await dropQueuePrefix(url, prefix);
  await database?.drop();
});

describe('search sync', () => {
  it('sends everything on its first run, then only repositories crawled since, across replicas', async () => {
    let now = new Date(Date.now() + 5 * 60_000);
    const start = () =>
      startSearchSync({ db: database.db, engine, redis, prefix, everyMs: 3_600_000, clock: () => now });
    const first = start();
    expect(await first.tick()).toBe(2);
    expect(indexed.flat().sort()).toEqual(['gh:acme/one/a', 'gh:acme/two/b']);
    await first.close();

    // A replica started later reads the watermark from Redis: nothing new, nothing sent.
    indexed.length = 0;
    const second = start();
    expect(await second.tick()).toBe(0);
    // A worker re-crawls acme/two (well after the overlap window): only its skills are sent.
    now = new Date(now.getTime() + 10 * 60_000);
    await database.db
      .update(repositories)
      .set({ lastCrawledAt: new Date(now.getTime() - 1_000) })
      .where(eq(repositories.name, 'two'));
    expect(await second.tick()).toBe(1);
    expect(indexed).toEqual([['gh:acme/two/b']]);
    await second.close();
  });

  it('keeps the watermark when the engine fails, so the next run sends the same repositories', async () => {
    const attempted: string[] = [];
    const failing: SearchEngine = {
      ...engine,
      index: async (identities) => {
        attempted.push(...identities);
        throw new Error('meilisearch unreachable');
      },
    };
    const later = new Date(Date.now() + 60 * 60_000);
    await database.db
      .update(repositories)
      .set({ lastCrawledAt: new Date(later.getTime() - 1_000) })
      .where(eq(repositories.name, 'one'));
    const broken = startSearchSync({
      db: database.db,
      engine: failing,
      redis,
      prefix,
      everyMs: 3_600_000,
      clock: () => later,
    });
    await expect(broken.tick()).rejects.toThrow('meilisearch unreachable');
    await broken.close();
    indexed.length = 0;
    const healed = startSearchSync({
      db: database.db,
      engine,
      redis,
      prefix,
      everyMs: 3_600_000,
      clock: () => later,
    });
    expect(await healed.tick()).toBe(attempted.length);
    expect(attempted).toContain('gh:acme/one/a');
    expect(indexed.flat().sort()).toEqual(attempted.sort());
    await healed.close();
  });
});
