import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Crawler, createCrawler, settingsWith } from '@atskills/crawler';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { createRepo } from '../../../../test/support/corpus.js';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.js';
import type { PrivateGithub } from '../../../../test/support/github-private.js';
import { type GithubStandin, startGithubStandin } from '../../../../test/support/github-standin.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';

/** A SKILL.md with this name and description. */
export const skillFile = (name: string, description: string) =>
  `---\nname: ${name}\ndescription: ${description}\n---\nSteps.\n`;

/** The hub app with a real in-process crawler over the GitHub stand-in, on a database of its own. */
export interface CrawlingHub {
  root: string;
  standin: GithubStandin;
  db: TestDatabase;
  crawler: Crawler;
  app: FastifyInstance;
  /** Working clones of the repositories, for commits (createRepo's workDir). */
  workDirs: Map<string, string>;
  close(): Promise<void>;
}

/** Builds the repositories (`owner/repo` -> files), the stand-in, the crawler and the app. */
export async function startCrawlingHub(
  label: string,
  repos: Record<string, Record<string, string>>,
  env: Record<string, string> = {},
  github: { private?: PrivateGithub } = {},
): Promise<CrawlingHub> {
  const root = await mkdtemp(path.join(tmpdir(), `atskills-${label}-`));
  const workDirs = new Map<string, string>();
  for (const [fullName, files] of Object.entries(repos)) {
    workDirs.set(fullName, (await createRepo(root, fullName, files)).workDir);
  }
  const standin = await startGithubStandin({ reposRoot: root, ...github });
  const db = await createTestDatabase(label);
  const crawler = createCrawler({
    db: db.db,
    settings: settingsWith({
      GITHUB_API_URL: standin.apiUrl,
      GIT_BASE_URL: standin.gitUrl,
      DATABASE_URL: db.url,
      CRAWL_BACKOFF_MS: 100,
    }),
    logger: pino({ level: 'error' }),
  });
  const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', READ_CACHE_MB: '0', ...env }), {
    database: db,
    queue: crawler,
  });
  return {
    root,
    standin,
    db,
    crawler,
    app,
    workDirs,
    async close() {
      await app.close();
      await crawler.close();
      await db.drop();
      await standin.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

/** Polls `read` until `done` holds (or fails after `timeoutMs` with the last value). */
export async function until<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 60_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > end) throw new Error(`timed out; last value ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
