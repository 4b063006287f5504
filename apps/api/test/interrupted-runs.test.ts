// Crawl runs whose jobs lived in a process's memory (the in-process queue: `npm start` without Redis) and went
// with it. A run left `running` never finishes, and every later index request of its repositories joins it
// instead of starting a crawl. A stop ends such runs `failed` (interrupted); a hub on the embedded database,
// which no other process can share, ends at start the runs its last process left behind (a crash).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  claimRunOwnership,
  createCrawler,
  createLogger,
  type RunOwnership,
  settingsWith,
} from '@atskills/crawler';
import {
  attachIndexRequestRun,
  connectDatabase,
  crawlRunProgress,
  createCrawlRun,
  type Database,
  databaseOptions,
  migrate,
  openIndexRequest,
  requestIndexing,
} from '@atskills/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRepo } from '../../../test/support/corpus.js';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { type GithubStandin, startGithubStandin } from '../../../test/support/github-standin.js';
import { embeddedHubEnv, startHubProcess, stopHubProcess } from '../../../test/support/hub-process.js';
import { startHub } from '../src/runtime/start.js';

let root: string;
let db: TestDatabase;
let standin: GithubStandin;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'atskills-interrupted-'));
  for (const name of ['skills', 'more', 'extra']) {
    await createRepo(path.join(root, 'repos'), `acme/${name}`, {
      'deploy/SKILL.md': '---\nname: deploy\ndescription: Deploys the service.\n---\nSteps.\n',
    });
  }
  [db, standin] = await Promise.all([
    createTestDatabase('interrupted_runs'),
    startGithubStandin({ reposRoot: path.join(root, 'repos') }),
  ]);
}, 120_000);

afterAll(async () => {
  await standin?.close();
  await db?.drop();
  await rm(root, { recursive: true, force: true });
});

describe('an in-process crawler stopped mid-run', () => {
  it('ends the run failed (interrupted), so the next index request of its repository starts a crawl', async () => {
    const crawler = inProcessCrawler();
    const request = await requestIndexing(db.db, 'acme', 'skills', 'api');
    const runId = await crawler.startRun({
      kind: 'request',
      source: { kind: 'repos', repos: ['acme/skills', 'acme/more', 'acme/extra'] },
    });
    await attachIndexRequestRun(db.db, request.id, runId);
    // One repository job at a time: the stop lets the running one finish and drops the others.
    await crawler.close();
    const progress = await crawlRunProgress(db.db, runId);
    expect(progress).toMatchObject({ status: 'failed', repositoriesTotal: 3 });
    expect(progress!.repositoriesDone).toBeLessThan(3);
    expect(await runRow(db.db, runId)).toMatchObject({ status: 'failed', totals: { interrupted: 1 } });
    expect(await openIndexRequest(db.db, 'acme', 'skills')).toBeUndefined();
    const next = await requestIndexing(db.db, 'acme', 'skills', 'api');
    expect(next.created).toBe(true);
  });
});

describe('a hub on the embedded database', () => {
  it('ends at start the runs its last process left running', async () => {
    const dataDir = path.join(root, '.data');
    const before = await connectDatabase(databaseOptions('api', { dataDir }));
    let runId: number;
    try {
      await migrate(before);
      runId = await createCrawlRun(before.db, { kind: 'request' });
    } finally {
      await before.close();
    }
    const hub = await startHub({
      env: embeddedHubEnv(dataDir, { LOG_LEVEL: 'silent', RECRAWL_TICK_MS: '0', SEARCH_ENGINE: 'postgres' }),
    });
    await hub.shutdown('test over');
    const after = await connectDatabase(databaseOptions('api', { dataDir }));
    try {
      expect(await runRow(after.db, runId)).toMatchObject({ status: 'failed', totals: { interrupted: 1 } });
    } finally {
      await after.close();
    }
  }, 120_000);
});

describe('runs of a process on a PostgreSQL server without Redis', () => {
  it('are ended when their process dies, and only then; runs held in Redis are never touched', async () => {
    // A hub process of its own (the crawler runs in it): its lock is the process lock in this database.
    const dataDir = path.join(root, '.data-postgres');
    const hub = await startHubProcess(
      embeddedHubEnv(dataDir, {
        DATABASE_URL: db.url,
        LOG_LEVEL: 'info',
        RECRAWL_TICK_MS: '0',
        SEARCH_ENGINE: 'postgres',
      }),
    );
    let other: RunOwnership | undefined;
    try {
      const hubKey = await processLockKey(db.db);
      expect(hubKey).toBeTypeOf('number');
      const ownedByHub = await createCrawlRun(db.db, { kind: 'request', ownerLock: hubKey! });
      const inRedis = await createCrawlRun(db.db, { kind: 'request' });
      // Another process sweeping while the hub lives leaves its run alone.
      other = await claimRunOwnership({
        db: db.db,
        databaseUrl: db.url,
        logger: createLogger('silent'),
      });
      expect(await runRow(db.db, ownedByHub)).toMatchObject({ status: 'running' });
      // The hub is killed: nothing of it runs to end its runs, but its lock went with its connection.
      await stopHubProcess(hub, 'SIGKILL');
      // The server ends the dead connection's session (and its lock) as soon as it sees the socket close.
      await waitFor(async () => (await other!.sweep()).includes(ownedByHub));
      expect(await runRow(db.db, ownedByHub)).toMatchObject({ status: 'failed', totals: { interrupted: 1 } });
      expect(await runRow(db.db, inRedis)).toMatchObject({ status: 'running' });

      // A run this process's crawler starts carries its key, and is its own: its sweep leaves it alone.
      const crawler = inProcessCrawler(other.key);
      const mine = await crawler.startRun({
        kind: 'request',
        source: { kind: 'repos', repos: ['acme/skills'] },
      });
      expect(await ownerOf(db.db, mine)).toBe(other.key);
      expect(await other.sweep()).toEqual([]);
      await crawler.waitForRun(mine);
      await crawler.close();
    } finally {
      await stopHubProcess(hub, 'SIGKILL');
      await other?.close();
    }
  }, 120_000);
});

/** A crawler running its jobs in this process, one repository at a time, its runs stamped with `runOwner`. */
function inProcessCrawler(runOwner?: number) {
  return createCrawler({
    db: db.db,
    settings: settingsWith({
      GITHUB_API_URL: standin.apiUrl,
      GIT_BASE_URL: standin.gitUrl,
      LOG_LEVEL: 'silent',
      CRAWL_CONCURRENCY: 1,
    }),
    logger: createLogger('silent'),
    ...(runOwner !== undefined ? { runOwner } : {}),
  });
}

/** The key of the one process lock held in this database (the hub's), if any. */
async function processLockKey(database: Database): Promise<number | undefined> {
  const result = (await database.execute(
    `select objid::int as key from pg_locks where locktype = 'advisory' and classid = ${0x61747372} and granted and database = (select oid from pg_database where datname = current_database())` as never,
  )) as unknown as { rows: { key: number }[] };
  return result.rows[0]?.key;
}

/** A run's owner lock as stored. */
async function ownerOf(database: Database, runId: number) {
  const result = (await database.execute(
    `select owner_lock from crawl_runs where id = ${Number(runId)}` as never,
  )) as unknown as { rows: { owner_lock: number | null }[] };
  return result.rows[0]?.owner_lock;
}

/** Polls `done` until it holds (or 20 s pass). */
async function waitFor(done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A run's status and totals as stored. */
async function runRow(database: Database, runId: number) {
  const result = (await database.execute(
    `select status, totals from crawl_runs where id = ${Number(runId)}` as never,
  )) as unknown as { rows: { status: string; totals: Record<string, number> }[] };
  return result.rows[0];
}
