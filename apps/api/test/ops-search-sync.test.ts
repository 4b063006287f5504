/**
 * What any writer changes in Postgres (crawler workers in other processes, publishes, report decisions)
 * reaches the external search engine through the API's periodic sync of the skills change feed.
 * Meilisearch cannot run here, so the engine is a recording double; the database and Redis are real.
 */
import {
  currentChangeMark,
  listSkillContainers,
  liveSkillIdentities,
  moveRepository,
  repositories,
  skills,
} from '@atskills/db';
import { eq, sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { dropQueuePrefix, redisUrl, uniqueQueuePrefix } from '../../../test/support/redis.js';
import { startSearchSync } from '../src/runtime/search-sync.js';
import type { SearchEngine } from '../src/search/engine.js';
import { applySkillChanges, type SkillHolder } from '../src/search/skill-changes.js';
import { seedHubCollection, seedRepository, skillMd } from './support/seed.js';

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

/** A write to a skill row as a crawl or a report decision makes one (its text unchanged). */
const touch = (identity: string) =>
  database.db
    .update(skills)
    .set({ stars: sql`${skills.stars} + 1` })
    .where(eq(skills.identity, identity));

describe('search sync', () => {
  it('sends every skill on its first run, then what any writer changed since, across replicas', async () => {
    const start = () => startSearchSync({ db: database.db, engine, redis, prefix, everyMs: 3_600_000 });
    const first = start();
    expect(await first.tick()).toBe(2);
    expect(indexed.flat().sort()).toEqual(['gh:acme/one/a', 'gh:acme/two/b']);
    await first.close();

    // A replica started later reads the mark from Redis: nothing new, nothing sent.
    indexed.length = 0;
    const second = start();
    expect(await second.tick()).toBe(0);
    // A worker re-crawls acme/two: only its skill is sent.
    await touch('gh:acme/two/b');
    expect(await second.tick()).toBe(1);
    expect(indexed).toEqual([['gh:acme/two/b']]);
    // A publish through the API: a hub collection has no repository, and the crawl-only sync never sent it.
    indexed.length = 0;
    await seedHubCollection(database.db, 'acme', 'kit', { 'c/SKILL.md': skillMd('c', 'Third skill.') });
    expect(await second.tick()).toBe(1);
    expect(indexed).toEqual([['hub:acme/kit/c']]);
    // A report decision rewrites flags only (no crawl, no publish): sent as well.
    indexed.length = 0;
    await database.db.update(skills).set({ flags: [] }).where(eq(skills.identity, 'gh:acme/one/a'));
    expect(await second.tick()).toBe(1);
    expect(indexed).toEqual([['gh:acme/one/a']]);
    await second.close();
  });

  it('keeps the mark when the engine fails, so the next run sends the same skills', async () => {
    const attempted: string[] = [];
    const failing: SearchEngine = {
      ...engine,
      index: async (identities) => {
        attempted.push(...identities);
        throw new Error('meilisearch unreachable');
      },
    };
    await touch('gh:acme/one/a');
    const broken = startSearchSync({ db: database.db, engine: failing, redis, prefix, everyMs: 3_600_000 });
    await expect(broken.tick()).rejects.toThrow('meilisearch unreachable');
    await broken.close();
    indexed.length = 0;
    const healed = startSearchSync({ db: database.db, engine, redis, prefix, everyMs: 3_600_000 });
    expect(await healed.tick()).toBe(attempted.length);
    expect(attempted).toEqual(['gh:acme/one/a']);
    expect(indexed.flat()).toEqual(attempted);
    await healed.close();
  });

  it('sends the identities a moved or deleted repository left, with the container they were in', async () => {
    await seedRepository(database.db, 'acme', 'three', { 'c/SKILL.md': skillMd('c', 'Third skill.') });
    const sync = startSearchSync({ db: database.db, engine, redis, prefix, everyMs: 3_600_000 });
    await sync.tick();
    // An in-memory holder (the search index, the suggestion model) following the same feed.
    const held = new Map((await liveSkillIdentities(database.db)).map((identity) => [identity, 'seen']));
    expect(held.has('gh:acme/three/c')).toBe(true);
    let scannedAll = 0;
    const holder: SkillHolder = {
      revisionOf: (identity) => held.get(identity),
      visibilityOf: () => 'public',
      identities: () => {
        scannedAll++;
        return held.keys();
      },
      get size() {
        return held.size;
      },
      remove: (identity) => held.delete(identity),
      patch: () => {},
      upsert: (row) => held.set(row.identity, row.revision),
    };
    let mark = await currentChangeMark(database.db);

    // The repository moved (GitHub redirected its old name): its skill took the new name's identity, and
    // no skills row names the old one. Meilisearch held a document for it, which only this sync can drop.
    indexed.length = 0;
    const moved = await moveRepository(
      database.db,
      { owner: 'acme', name: 'three' },
      { owner: 'newco', name: 'three' },
    );
    expect(moved.identities).toEqual([{ from: 'gh:acme/three/c', to: 'gh:newco/three/c' }]);
    expect(await sync.tick()).toBe(2);
    expect(indexed.flat().sort()).toEqual(['gh:acme/three/c', 'gh:newco/three/c']);
    // Re-indexing the old identity replaces the old container's documents with what it holds: nothing.
    expect(await listSkillContainers(database.db, ['gh:acme/three/c'])).toEqual([
      { source: 'gh', owner: 'acme', container: 'three' },
    ]);
    const scan = await applySkillChanges(database.db, mark, holder);
    mark = scan!.nextMark;
    expect(held.has('gh:acme/three/c')).toBe(false);
    expect(held.get('gh:newco/three/c')).toBeDefined();
    // The holder learnt it from the feed, without reading every live identity to find out.
    expect(scannedAll).toBe(0);

    // The repository row deleted outright (its skills go by cascade).
    indexed.length = 0;
    await database.db.delete(repositories).where(eq(repositories.owner, 'newco'));
    expect(await sync.tick()).toBe(1);
    expect(indexed).toEqual([['gh:newco/three/c']]);
    expect(await listSkillContainers(database.db, ['gh:newco/three/c'])).toEqual([
      { source: 'gh', owner: 'newco', container: 'three' },
    ]);
    await applySkillChanges(database.db, mark, holder);
    expect(held.has('gh:newco/three/c')).toBe(false);
    expect(scannedAll).toBe(0);
    // Nothing changed since: nothing is sent again.
    indexed.length = 0;
    expect(await sync.tick()).toBe(0);
    await sync.close();
    // A sync without a mark (its Redis lost) sends every live skill and what skills left this week.
    const fresh = startSearchSync({
      db: database.db,
      engine,
      redis,
      prefix: `${prefix}-fresh`,
      everyMs: 3_600_000,
    });
    await fresh.tick();
    await fresh.close();
    await redis.del(`${prefix}-fresh:search-sync:mark`);
    const sent = indexed.flat();
    expect(sent).toEqual(expect.arrayContaining(['gh:acme/three/c', 'gh:newco/three/c', 'gh:acme/one/a']));
    expect(sent).toHaveLength((await liveSkillIdentities(database.db)).length + 2);
  });
});
