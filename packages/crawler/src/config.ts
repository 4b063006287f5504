import { accessSync, constants, statSync } from 'node:fs';
import { GithubAuthEnvSchema, type GithubAuthSettings, githubAuthFrom } from '@atskills/github-auth';
import {
  ConfigError,
  type Env,
  GIT_BASE_SETTING,
  integer,
  LogLevel,
  optionalText,
  optionalUrlOf,
  parseEnv,
  positiveInt,
  type Settings,
  SHUTDOWN_SETTING,
  toSettings,
} from '@atskills/protocol/config';
import { z } from 'zod';
import { defaultContentProcesses } from './content/content-pool.js';

/** GitHub asks for about 2 s between search requests (octokit's own pacing); GITHUB_SEARCH_INTERVAL_MS sets it. */
export const DEFAULT_SEARCH_INTERVAL_MS = 2_000;

/** Unset, or a folder that exists and can be written: else every crawl would fail at its first clone. */
function isWritableFolder(dir: string | undefined): boolean {
  if (dir === undefined) return true;
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/** Every setting of the crawler, read once from the environment (docs/settings.md is generated from it). */
export const CrawlerSettingsSchema = z.object({
  GITHUB_TOKEN: optionalText.describe(
    "Token for GitHub REST (5,000 requests an hour instead of 60) and git (sent as a basic-auth header through git's environment, never on the command line).",
  ),
  GITHUB_API_URL: z
    .url()
    .default('https://api.github.com')
    .describe("GitHub's REST base (GitHub Enterprise: `https://HOST/api/v3`)."),
  GITHUB_SEARCH_INTERVAL_MS: integer(DEFAULT_SEARCH_INTERVAL_MS).describe(
    "Least time between two GitHub search requests in discovery (ms). GitHub's secondary rate limits ask for about 2 s; a GitHub Enterprise server with other limits may allow less.",
  ),
  ...GIT_BASE_SETTING,
  DATABASE_URL: optionalUrlOf('postgres', 'postgresql').describe(
    'The PostgreSQL server the crawler writes its index to.',
  ),
  ATSKILLS_DATA_DIR: z
    .string()
    .trim()
    .min(1)
    .default('./.data')
    .describe(
      "The hub's data folder: without DATABASE_URL, `crawl` finds the running hub that owns the embedded database there and has it run the crawl.",
    ),
  REDIS_URL: optionalUrlOf('redis', 'rediss').describe(
    'Redis for BullMQ crawl queues; unset, jobs run in the crawling process.',
  ),
  // An unchanged repository costs one conditional REST request and no git, so most jobs only wait on the
  // network: many can be in flight.
  CRAWL_CONCURRENCY: positiveInt(32).describe('Repository jobs in flight at once, per process.'),
  CRAWL_GIT_CONCURRENCY: positiveInt(6).describe(
    'Of those, jobs that fetch with git and parse at once (git processes, memory, CPU), and link jobs at once; the job timeout starts when one gets its slot.',
  ),
  CRAWL_CONTENT_PROCESSES: integer(defaultContentProcesses()).meta({
    description: 'Child processes that parse, count tokens and scan skills; 0 does it on the event loop.',
    defaultText: 'one per core, at most 4',
  }),
  CRAWL_MAX_FILE_BYTES: positiveInt(1024 * 1024).describe(
    'Files larger than this (bytes) are not downloaded; they are listed with `skipped`.',
  ),
  CRAWL_JOB_TIMEOUT_MS: positiveInt(120_000).describe(
    'A repository job running longer (ms) is aborted (its git processes killed) and recorded as `timeout`.',
  ),
  CRAWL_RATE_LIMIT_PER_MINUTE: positiveInt(600).describe(
    'Repository jobs started per minute (BullMQ limiter).',
  ),
  CRAWL_ATTEMPTS: positiveInt(4).describe('Attempts per repository job before it is recorded as failed.'),
  CRAWL_BACKOFF_MS: positiveInt(2_000).describe('First retry delay (ms), doubled at each attempt.'),
  CRAWL_LOCK_DURATION_MS: positiveInt(30_000).describe(
    "BullMQ lock of an active job (ms); a dead worker's jobs go back to the queue after about this long.",
  ),
  CRAWL_QUEUE_PREFIX: z
    .string()
    .min(1)
    .default('atskills')
    .describe('Prefix of every BullMQ key in Redis (lets several hubs or test files share one Redis).'),
  CRAWL_WORK_DIR: optionalText
    .refine(isWritableFolder, 'must be an existing folder this process can write to')
    .meta({
      description: 'Where the crawler makes its temporary git repositories.',
      defaultText: 'the OS temp folder',
    }),
  LOG_LEVEL: LogLevel.default('info').describe('pino level (JSON lines on stderr), or `silent`.'),
  /** How long running jobs get to finish on SIGTERM (the worker) or Ctrl-C (a crawl), like the hub's. */
  ...SHUTDOWN_SETTING,
  /** The GitHub App and the token keys of linked team repositories (@atskills/github-auth). */
  ...GithubAuthEnvSchema.shape,
});

/** The crawler's variables as parsed, before they are renamed. */
export type CrawlerValues = z.output<typeof CrawlerSettingsSchema>;

/**
 * The crawler's settings, named in camelCase (`CRAWL_CONCURRENCY` -> `crawlConcurrency`), with the linked
 * repositories' credentials checked once from GITHUB_APP_* and LINK_TOKEN_KEYS.
 */
export type CrawlerSettings = Settings<CrawlerValues> & { readonly githubAuth: GithubAuthSettings };

/** The environment variables the crawler reads. */
export type CrawlerVariable = keyof CrawlerValues;

const CRAWLER_VARIABLES = Object.keys(CrawlerSettingsSchema.shape) as CrawlerVariable[];

/** Parses settings from an environment-like object (fails fast, naming the variable), frozen. */
export function loadSettings(env: Env = process.env): CrawlerSettings {
  const label = 'crawler settings';
  return crawlerSettingsFrom(parseEnv(CrawlerSettingsSchema, env, label), label);
}

/**
 * The crawler's settings from variables a process has already parsed: the crawler's own schema, or the
 * hub's composed one that spreads it (only the crawler's variables are kept). `githubAuth` is given when
 * the process has checked the linked repositories' settings already; `label` names the process's settings
 * in errors.
 */
export function crawlerSettingsFrom(
  values: CrawlerValues,
  label: string,
  githubAuth?: GithubAuthSettings,
): CrawlerSettings {
  const own = Object.fromEntries(CRAWLER_VARIABLES.map((variable) => [variable, values[variable]]));
  let auth = githubAuth;
  if (!auth) {
    try {
      auth = githubAuthFrom(values);
    } catch (error) {
      throw new ConfigError(`Invalid ${label}: ${(error as Error).message}`);
    }
  }
  return Object.freeze({ ...toSettings(own as CrawlerValues), githubAuth: auth });
}

/** Settings for tests and embedding: defaults plus the given overrides, validated the same way. */
export function settingsWith(overrides: Partial<Record<CrawlerVariable, string | number | undefined>>) {
  const env: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(overrides))
    env[key] = value === undefined ? undefined : String(value);
  return loadSettings(env);
}
