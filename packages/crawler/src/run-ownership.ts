import { type Database, failOrphanedRuns, holdProcessLock, type ProcessLock } from '@atskills/db';
import type { Logger } from 'pino';

/** How often a process ends the runs of processes that died (besides once at start). */
const SWEEP_MS = 5 * 60_000;

/** This process's claim on the runs its in-process queue runs (see claimRunOwnership). */
export interface RunOwnership {
  /** The key the runs this process starts carry (`createCrawler`'s `runOwner`). */
  readonly key: number;
  /** Ends the runs of processes that died now; returns them. */
  sweep(): Promise<number[]>;
  close(): Promise<void>;
}

/**
 * For a crawler whose jobs live in this process's memory on a PostgreSQL server (no Redis): holds this
 * process's lock (process-lock.ts), ends at once the runs of owners that died (a crash or SIGKILL leaves
 * them running, and every later index request of their repositories would join them), and again every few
 * minutes for processes that die while this one runs. Runs that hold jobs in Redis carry no owner and are
 * never touched.
 */
export async function claimRunOwnership(options: {
  db: Database;
  databaseUrl: string;
  logger: Logger;
  sweepMs?: number;
}): Promise<RunOwnership> {
  const { db, logger } = options;
  const lock: ProcessLock = await holdProcessLock({
    url: options.databaseUrl,
    onError: (err) => logger.warn({ err }, 'the process lock lost its connection; taking it again'),
  });
  const sweep = async () => {
    const ended = await failOrphanedRuns(db, (key) => lock.isAlive(key));
    if (ended.length > 0) logger.warn({ runIds: ended }, 'crawl runs of a process that died ended');
    return ended;
  };
  try {
    await sweep();
  } catch (err) {
    await lock.close();
    throw err;
  }
  const timer = setInterval(() => {
    sweep().catch((err) => logger.warn({ err }, 'could not end the runs of processes that died'));
  }, options.sweepMs ?? SWEEP_MS);
  timer.unref();
  return {
    key: lock.key,
    sweep,
    async close() {
      clearInterval(timer);
      await lock.close();
    },
  };
}
