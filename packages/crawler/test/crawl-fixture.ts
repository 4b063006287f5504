// Shared set-up of the crawler tests: a database per file, the GitHub stand-in, settings pointing at it.
import { skills } from '@atskills/db';
import { eq } from 'drizzle-orm';
import { pino } from 'pino';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { type GithubStandin, startGithubStandin } from '../../../test/support/github-standin.js';
import { type CrawlerSettings, settingsWith } from '../src/config.js';

export interface CrawlFixture {
  db: TestDatabase;
  standin: GithubStandin;
  settings: (overrides?: Parameters<typeof settingsWith>[0]) => CrawlerSettings;
  close(): Promise<void>;
}

/** A quiet logger for tests (errors only). */
export const testLogger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'error' });

export async function startCrawlFixture(
  label: string,
  reposRoot: string,
  corpusDir?: string,
): Promise<CrawlFixture> {
  const [db, standin] = await Promise.all([
    createTestDatabase(label),
    startGithubStandin({ reposRoot, corpusDir }),
  ]);
  return {
    db,
    standin,
    settings: (overrides = {}) =>
      settingsWith({
        GITHUB_API_URL: standin.apiUrl,
        GIT_BASE_URL: standin.gitUrl,
        DATABASE_URL: db.url,
        CRAWL_BACKOFF_MS: 200,
        // The stand-in has no secondary rate limit to respect; GitHub's 2 s pacing made discovery tests wait a minute.
        GITHUB_SEARCH_INTERVAL_MS: 0,
        ...overrides,
      }),
    async close() {
      await standin.close();
      await db.drop();
    },
  };
}

/** The live (not gone) skills of a repository as path -> row. */
export async function liveSkills(db: TestDatabase, owner: string, repo: string) {
  const rows = await db.db.select().from(skills).where(eq(skills.owner, owner));
  return new Map(rows.filter((r) => r.container === repo && r.goneAt === null).map((r) => [r.path, r]));
}
