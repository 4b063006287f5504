/**
 * Keeps an external search engine (Meilisearch) in step with what the crawler workers wrote to Postgres.
 * Publishes index themselves (the API does both), but crawls run in other processes, so a periodic sync
 * re-indexes the containers of every repository crawled since the last sync. The watermark lives in
 * Redis when there is one (a restarted or added API replica carries on where the last sync stopped, and
 * a lock lets one replica sync at a time); a missing watermark means a first, full sync.
 */
import { crawledSkillIdentities, type Database } from '@atskills/db';
import type { Redis } from 'ioredis';
import type { SearchEngine } from '../search/engine.js';

/** How often crawled repositories are pushed to the search engine. */
export const SEARCH_SYNC_MS = 30_000;
const BATCH = 500;
// A crawl stamps last_crawled_at before its transaction commits: look back this far past the watermark so a
// commit that lands after a sync's query is caught by the next one (re-indexing is idempotent).
const OVERLAP_MS = 60_000;

/** Re-indexes the skills of repositories crawled in (since, until]; returns how many identities it sent. */
export async function syncCrawledSkills(
  db: Database,
  engine: SearchEngine,
  since: Date,
  until: Date,
): Promise<number> {
  const identities = await crawledSkillIdentities(db, since, until);
  for (let i = 0; i < identities.length; i += BATCH) await engine.index(identities.slice(i, i + BATCH));
  return identities.length;
}

export interface SearchSync {
  /** Runs one sync now (also what the timer runs). */
  tick(): Promise<number>;
  close(): Promise<void>;
}

/** Starts the periodic sync (the timer does not keep the process alive). */
export function startSearchSync(options: {
  db: Database;
  engine: SearchEngine;
  redis?: Redis;
  prefix?: string;
  everyMs?: number;
  clock?: () => Date;
  logger?: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}): SearchSync {
  const clock = options.clock ?? (() => new Date());
  const key = `${options.prefix ?? 'atskills'}:search-sync`;
  let memoryWatermark: Date | undefined;
  let running: Promise<number> = Promise.resolve(0);

  const readWatermark = async () => {
    if (!options.redis) return memoryWatermark;
    const value = await options.redis.get(`${key}:watermark`);
    return value ? new Date(value) : undefined;
  };
  const writeWatermark = async (at: Date) => {
    memoryWatermark = at;
    await options.redis?.set(`${key}:watermark`, at.toISOString());
  };

  const once = async (): Promise<number> => {
    const everyMs = options.everyMs ?? SEARCH_SYNC_MS;
    // One replica at a time; the lock expires on its own if that replica dies mid-sync.
    if (options.redis && (await options.redis.set(`${key}:lock`, '1', 'PX', everyMs * 4, 'NX')) !== 'OK')
      return 0;
    try {
      const until = clock();
      const watermark = await readWatermark();
      const since = watermark ? new Date(watermark.getTime() - OVERLAP_MS) : new Date(0);
      const sent = await syncCrawledSkills(options.db, options.engine, since, until);
      await writeWatermark(until);
      if (sent > 0) options.logger?.info({ identities: sent, since }, 'search index synced with crawls');
      return sent;
    } finally {
      await options.redis?.del(`${key}:lock`);
    }
  };
  const tick = () => {
    running = running.then(once, once);
    return running;
  };

  const timer = setInterval(() => {
    // A search engine that is down keeps the watermark: the next tick sends the same repositories again.
    tick().catch((err: Error) =>
      options.logger?.warn({ err: { message: err.message } }, 'search sync failed'),
    );
  }, options.everyMs ?? SEARCH_SYNC_MS);
  timer.unref();
  return {
    tick,
    async close() {
      clearInterval(timer);
      await running.catch(() => 0);
    },
  };
}
