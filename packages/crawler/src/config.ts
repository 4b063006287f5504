import { GithubAuthEnvSchema } from '@atskills/github-auth';
import {
  type Env,
  integer,
  LogLevel,
  optionalText,
  optionalUrl,
  parseSettings,
  positiveInt,
  type Settings,
  SHUTDOWN_SETTING,
} from '@atskills/protocol/config';
import { z } from 'zod';
import { defaultContentProcesses } from './content/content-pool.js';

/** Every setting of the crawler, read once from the environment (see README for each). */
export const CrawlerSettingsSchema = z.object({
  GITHUB_TOKEN: optionalText,
  GITHUB_API_URL: z.url().default('https://api.github.com'),
  GIT_BASE_URL: z.url().default('https://github.com'),
  DATABASE_URL: optionalUrl,
  /**
   * The hub's data folder (as the hub reads it): without DATABASE_URL, `crawl` finds the running hub that
   * owns the embedded database there and has it run the crawl.
   */
  ATSKILLS_DATA_DIR: z.string().trim().min(1).default('./.data'),
  REDIS_URL: optionalUrl,
  /**
   * Repository jobs in flight at once (per worker process). An unchanged repository costs one conditional
   * REST request and no git, so most of them only wait on the network: many can be in flight.
   */
  CRAWL_CONCURRENCY: positiveInt(32),
  /** Of those, how many fetch with git and parse at once (git processes, memory, CPU); also link jobs. */
  CRAWL_GIT_CONCURRENCY: positiveInt(6),
  /**
   * Child processes that parse, count tokens and scan skills (default: one per core, at most 4); 0 does
   * it on the event loop.
   */
  CRAWL_CONTENT_PROCESSES: integer(defaultContentProcesses()),
  /** Files larger than this are not downloaded; they are listed with `skipped`. */
  CRAWL_MAX_FILE_BYTES: positiveInt(1024 * 1024),
  /** A repository job that takes longer is aborted (its git processes killed) and recorded as failed. */
  CRAWL_JOB_TIMEOUT_MS: positiveInt(120_000),
  /** Repository jobs started per minute (BullMQ limiter); GitHub's limits decide what is sensible. */
  CRAWL_RATE_LIMIT_PER_MINUTE: positiveInt(600),
  /** Attempts per repository job before it is recorded as failed. */
  CRAWL_ATTEMPTS: positiveInt(4),
  /** First retry delay; doubled at each attempt (exponential backoff). */
  CRAWL_BACKOFF_MS: positiveInt(2_000),
  /** BullMQ lock of an active job; a worker that dies loses its jobs to others after about this long. */
  CRAWL_LOCK_DURATION_MS: positiveInt(30_000),
  /** Prefix of every BullMQ key in Redis (lets several hubs or test files share one Redis). */
  CRAWL_QUEUE_PREFIX: z.string().min(1).default('atskills'),
  /** Where the crawler makes its temporary git repositories (default: the OS temp folder). */
  CRAWL_WORK_DIR: optionalText,
  LOG_LEVEL: LogLevel.default('info'),
  /** How long running jobs get to finish on SIGTERM (the worker) or Ctrl-C (a crawl), like the hub's. */
  ...SHUTDOWN_SETTING,
  /** The GitHub App and the token keys of linked team repositories (@atskills/github-auth). */
  ...GithubAuthEnvSchema.shape,
});

/** The crawler's settings, named in camelCase (`CRAWL_CONCURRENCY` -> `crawlConcurrency`). */
export type CrawlerSettings = Settings<z.infer<typeof CrawlerSettingsSchema>>;

/** The environment variables the crawler reads. */
export type CrawlerVariable = keyof z.infer<typeof CrawlerSettingsSchema>;

/** Parses settings from an environment-like object (fails fast, naming the variable), frozen. */
export function loadSettings(env: Env = process.env): CrawlerSettings {
  return parseSettings(CrawlerSettingsSchema, env, 'crawler settings');
}

/** Settings for tests and embedding: defaults plus the given overrides, validated the same way. */
export function settingsWith(overrides: Partial<Record<CrawlerVariable, string | number | undefined>>) {
  const env: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(overrides))
    env[key] = value === undefined ? undefined : String(value);
  return loadSettings(env);
}
