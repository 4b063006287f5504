// SIGKILL a `crawler worker` child process mid-crawl, start another: the run completes with no duplicate
// and no missing skill (BullMQ redelivers the stalled jobs; the one-transaction writes make that safe).
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { type Crawler, createCrawler } from '@atskills/crawler';
import { crawlReportsOfRun, crawlRunProgress, skills } from '@atskills/db';
import { findSkillFolders, type TreeEntry } from '@atskills/protocol';
import { QUEUES } from '@atskills/queue';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CrawlFixture,
  startCrawlFixture,
  testLogger,
} from '../../../packages/crawler/test/crawl-fixture.js';
import { buildCorpusRepos, corpusReposDir, readCorpusTree, repoRoot } from '../../../test/support/corpus.js';
import { dropQueuePrefix, redisUrl, uniqueQueuePrefix } from '../../../test/support/redis.js';

// A mix of sizes; the kill lands while jobs are active (checked below).
const REPOS = [
  'elastic/agent-skills',
  'getsentry/skills',
  'mattpocock/skills',
  'obra/superpowers',
  'hashicorp/agent-skills',
  'cloudflare/skills',
  'stripe/agent-toolkit',
];

let fx: CrawlFixture;
let redis: string;
let producer: Crawler;
const prefix = uniqueQueuePrefix('kill');
const children: ChildProcess[] = [];

function startWorker(): ChildProcess {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--conditions=@atskills/source',
      path.join(repoRoot, 'apps/crawler/src/main.ts'),
      'worker',
    ],
    {
      cwd: repoRoot,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        DATABASE_URL: fx.db.url,
        REDIS_URL: redis,
        CRAWL_QUEUE_PREFIX: prefix,
        GITHUB_API_URL: fx.standin.apiUrl,
        GIT_BASE_URL: fx.standin.gitUrl,
        CRAWL_CONCURRENCY: '3',
        // Short locks so the jobs of the killed worker are redelivered quickly.
        CRAWL_LOCK_DURATION_MS: '10000',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  children.push(child);
  return child;
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });

async function until(check: () => Promise<boolean>, what: string, limitMs = 240_000) {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  redis = await redisUrl();
  fx = await startCrawlFixture('kill', await buildCorpusRepos(), corpusReposDir);
  // This process only enqueues and watches; the work happens in the child workers.
  producer = createCrawler({
    db: fx.db.db,
    settings: fx.settings({ REDIS_URL: redis, CRAWL_QUEUE_PREFIX: prefix }),
    logger: testLogger,
    work: false,
  });
}, 120_000);

afterAll(async () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await producer?.close();
  await fx?.close();
  await dropQueuePrefix(redis, prefix);
});

describe('a worker killed mid-crawl', () => {
  it('completes the crawl after a restart with no duplicate and no missing skill', async () => {
    const runId = await producer.startRun({ kind: 'repos', source: { kind: 'repos', repos: REPOS } });
    const first = startWorker();
    const queue = new Queue(QUEUES.repository.name, { connection: { url: redis }, prefix });
    try {
      // Kill while repository jobs are active and before the run is done.
      await until(async () => (await queue.getActiveCount()) > 0, 'an active job');
      const progress = await crawlRunProgress(fx.db.db, runId);
      expect(progress!.repositoriesDone).toBeLessThan(REPOS.length);
      first.kill('SIGKILL');
      await exited(first);

      const second = startWorker();
      const done = await producer.waitForRun(runId, { pollMs: 200 });
      expect(done.status).toBe('finished');
      expect(done.outcomes).toMatchObject({ indexed: REPOS.length, failed: 0 });

      // Graceful stop: SIGTERM lets the idle worker close and exit 0.
      second.kill('SIGTERM');
      expect(await exited(second)).toBe(0);
    } finally {
      await queue.close();
    }

    const reports = await crawlReportsOfRun(fx.db.db, runId);
    expect(reports.map((r) => `${r.owner}/${r.name}`).sort()).toEqual([...REPOS].sort());
    const rows = await fx.db.db.select().from(skills);
    expect(new Set(rows.map((r) => r.identity)).size).toBe(rows.length);
    for (const name of REPOS) {
      const [owner, repo] = name.split('/');
      const entries: TreeEntry[] = (await readCorpusTree(name)).map((t) => ({
        path: t.path,
        type: t.mode === '120000' ? 'symlink' : 'file',
      }));
      const indexed = rows
        .filter((r) => r.owner === owner && r.container === repo && !r.goneAt)
        .map((r) => r.path);
      expect(indexed.sort(), name).toEqual(findSkillFolders(entries).sort());
    }
  }, 300_000);
});
