// Crawl runs whose jobs lived in a process's memory (the in-process queue: `npm start` without Redis) and went
// with it. A run left `running` never finishes, and every later index request of its repositories joins it
// instead of starting a crawl. A stop ends such runs `failed` (interrupted); a hub on the embedded database,
// which no other process can share, ends at start the runs its last process left behind (a crash).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createCrawler, createLogger, settingsWith } from '@atskills/crawler';
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
import { embeddedHubEnv } from '../../../test/support/hub-process.js';
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
    const crawler = createCrawler({
      db: db.db,
      settings: settingsWith({
        GITHUB_API_URL: standin.apiUrl,
        GIT_BASE_URL: standin.gitUrl,
        LOG_LEVEL: 'silent',
        CRAWL_CONCURRENCY: 1,
      }),
      logger: createLogger('silent'),
    });
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

/** A run's status and totals as stored. */
async function runRow(database: Database, runId: number) {
  const result = (await database.execute(
    `select status, totals from crawl_runs where id = ${Number(runId)}` as never,
  )) as unknown as { rows: { status: string; totals: Record<string, number> }[] };
  return result.rows[0];
}
