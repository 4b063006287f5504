/**
 * Keeps an external search engine (Meilisearch) in step with Postgres. Every writer changes skill rows:
 * crawler workers in other processes, publishes, link indexes, report decisions (flags), stars and
 * visibility. A periodic sync reads the skills change feed (rows written since a change mark, whoever
 * wrote them) and re-indexes their containers, so nothing depends on a writer remembering to tell the
 * engine. The mark lives in Redis when there is one (a restarted or added API replica carries on where the
 * last sync stopped, and a lock lets one replica sync at a time); a missing mark means a first, full sync.
 */
import {
  type ChangeMark,
  changedSkills,
  currentChangeMark,
  type Database,
  liveSkillIdentities,
  recentlyLeftIdentities,
} from '@atskills/db';
import type { Redis } from 'ioredis';
import type { SearchEngine } from '../search/engine.js';

/** How often changed skills are pushed to the search engine. */
export const SEARCH_SYNC_MS = 30_000;
const BATCH = 500;

/**
 * Re-indexes the skills written since `mark` (every live skill and the identities skills left in the last
 * seven days when there is none, or when the transaction counter wrapped since); answers how many
 * identities it sent and the mark the next sync starts from. Skills that are gone, deleted or moved go
 * too: re-indexing their container drops them.
 */
export async function syncChangedSkills(
  db: Database,
  engine: SearchEngine,
  mark: ChangeMark | undefined,
): Promise<{ sent: number; nextMark: ChangeMark }> {
  // Taken first: a row committed while this sync reads is at or above it, so the next sync sends it.
  const nextMark = await currentChangeMark(db);
  const changes = mark === undefined ? null : await changedSkills(db, mark);
  // An identity a skill left (deleted outright, or its repository moved) names its old container, whose
  // documents the engine replaces with what is there now: nothing, for a container that is gone.
  const identities = changes
    ? [...new Set([...changes.left, ...changes.rows.map((row) => row.identity)])]
    : [...(await recentlyLeftIdentities(db)), ...(await liveSkillIdentities(db))];
  for (let i = 0; i < identities.length; i += BATCH) await engine.index(identities.slice(i, i + BATCH));
  return { sent: identities.length, nextMark };
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
  logger?: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}): SearchSync {
  const key = `${options.prefix ?? 'atskills'}:search-sync`;
  let memoryMark: ChangeMark | undefined;
  let running: Promise<number> = Promise.resolve(0);

  // Kept under `:mark`; the crawl-only sync this replaced kept a timestamp under `:watermark`, which is no
  // change mark (an upgraded hub starts with one full sync).
  const readMark = async () => {
    if (!options.redis) return memoryMark;
    return (await options.redis.get(`${key}:mark`)) ?? undefined;
  };
  const writeMark = async (mark: ChangeMark) => {
    memoryMark = mark;
    await options.redis?.set(`${key}:mark`, mark);
  };

  const once = async (): Promise<number> => {
    const everyMs = options.everyMs ?? SEARCH_SYNC_MS;
    // One replica at a time; the lock expires on its own if that replica dies mid-sync.
    if (options.redis && (await options.redis.set(`${key}:lock`, '1', 'PX', everyMs * 4, 'NX')) !== 'OK')
      return 0;
    try {
      const mark = await readMark();
      const { sent, nextMark } = await syncChangedSkills(options.db, options.engine, mark);
      await writeMark(nextMark);
      if (sent > 0)
        options.logger?.info({ identities: sent, full: mark === undefined }, 'search index synced');
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
    // A search engine that is down keeps the mark: the next tick sends the same skills again.
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
