import { type CrawlerSettings, createLogger, loadSettings } from '@atskills/crawler';
import { connectPostgres, type DatabaseHandle, databaseOptions, migrate } from '@atskills/db';
import type { Logger } from 'pino';

export interface Booted {
  settings: CrawlerSettings;
  logger: Logger;
  database: DatabaseHandle;
}

/** Reads settings (fail fast), connects to Postgres and applies pending migrations. */
export async function boot(options: { quiet?: boolean } = {}): Promise<Booted> {
  const settings = loadSettings();
  if (!settings.databaseUrl) {
    throw new Error(
      'DATABASE_URL is not set: this command reads a PostgreSQL server (e.g. postgres://postgres@127.0.0.1:5432/postgres). On the embedded default, `npm run crawl -- --repos gh:owner/repo` crawls and `npm run crawl -- status --repo owner/name` reads the status of one repository through the running hub, and its /v1/crawl-status shows the crawl status.',
    );
  }
  // On a terminal the progress line is the output; logs below warn would tear it.
  const level = options.quiet && !process.env.LOG_LEVEL ? 'warn' : settings.logLevel;
  const logger = createLogger(level);
  // Every job that fetches with git holds a connection for its transaction; the others (one statement each,
  // and the batch of unchanged reports) share a few; leave room for progress and status queries.
  const database = connectPostgres({
    ...databaseOptions(
      'crawler',
      {},
      { max: Math.min(settings.crawlConcurrency, settings.crawlGitConcurrency) + 8 },
    ),
    url: settings.databaseUrl,
  });
  await migrate(database);
  return { settings, logger, database };
}
