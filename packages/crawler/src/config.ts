import { GithubAuthEnvSchema } from '@atskills/github-auth';
import { z } from 'zod';

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);
const optionalText = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

/** Every setting of the crawler, read once from the environment (see README for each). */
export const CrawlerSettingsSchema = z.object({
  GITHUB_TOKEN: optionalText,
  GITHUB_API_URL: z.url().default('https://api.github.com'),
  GIT_BASE_URL: z.url().default('https://github.com'),
  DATABASE_URL: optionalText,
  REDIS_URL: optionalText,
  /** Repository jobs run at once (per worker process). */
  CRAWL_CONCURRENCY: positiveInt(4),
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
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** The GitHub App and the token keys of linked team repositories (@atskills/github-auth). */
  ...GithubAuthEnvSchema.shape,
});

export type CrawlerSettings = Readonly<z.infer<typeof CrawlerSettingsSchema>>;

/** Raised when a setting is invalid; the message names the variable. */
export class SettingsError extends Error {
  override name = 'SettingsError';
}

/** Parses settings from an environment-like object (fails fast, naming the variable), frozen. */
export function loadSettings(env: Record<string, string | undefined> = process.env): CrawlerSettings {
  const parsed = CrawlerSettingsSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new SettingsError(`Invalid crawler settings: ${problems.join('; ')}`);
  }
  return Object.freeze(parsed.data);
}

/** Settings for tests and embedding: defaults plus the given overrides, validated the same way. */
export function settingsWith(overrides: Partial<Record<keyof CrawlerSettings, string | number | undefined>>) {
  const env: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(overrides))
    env[key] = value === undefined ? undefined : String(value);
  return loadSettings(env);
}
