import { GithubAuthEnvSchema, type GithubAuthSettings, loadGithubAuthSettings } from '@atskills/github-auth';
import {
  ConfigError,
  type Env,
  flag,
  integer,
  LogLevel,
  optionalUrl,
  parseEnv,
} from '@atskills/protocol/config';
import { z } from 'zod';
import { DEFAULT_PUBLISH_LIMITS, type PublishLimits } from './services/publish/limits.js';

export { ConfigError } from '@atskills/protocol/config';

/** The environment variables the hub reads, validated once at start-up. */
const EnvSchema = z.object({
  HOST: z.string().trim().min(1).default('127.0.0.1'),
  PORT: integer(8080, { max: 65535 }),
  DATABASE_URL: optionalUrl,
  MEILI_URL: optionalUrl,
  MEILI_MASTER_KEY: z.string().optional(),
  MEILI_INDEX: z.string().trim().min(1).default('skills'),
  REDIS_URL: optionalUrl,
  ATSKILLS_DATA_DIR: z.string().trim().min(1).default('./.data'),
  LOG_LEVEL: LogLevel.default('info'),
  /** The address people reach the hub at (links in pages and problem `instance`s); defaults to http://HOST:PORT. */
  PUBLIC_URL: optionalUrl,
  /** Largest request body accepted by default (bytes); the publish route sets its own limit. */
  BODY_LIMIT: integer(1_048_576, { min: 1024 }),
  /** Publishing bounds (teams): gzip body, unpacked bytes, files and skills per collection. */
  PUBLISH_MAX_ARCHIVE_BYTES: integer(DEFAULT_PUBLISH_LIMITS.maxCompressedBytes, { min: 1024 }),
  PUBLISH_MAX_UNPACKED_BYTES: integer(DEFAULT_PUBLISH_LIMITS.maxUnpackedBytes, { min: 1024 }),
  PUBLISH_MAX_FILES: integer(DEFAULT_PUBLISH_LIMITS.maxFiles, { min: 1 }),
  PUBLISH_MAX_SKILLS: integer(DEFAULT_PUBLISH_LIMITS.maxSkills, { min: 1 }),
  /** Memory for in-process answers of hot reads (search pages, live revisions), MiB; 0 turns it off. */
  READ_CACHE_MB: z.coerce.number().min(0).max(65536).default(32),
  /** Secret of the GitHub webhooks (X-Hub-Signature-256); without it POST /v1/webhooks/github answers 503. */
  GITHUB_WEBHOOK_SECRET: z
    .string()
    .optional()
    .transform((s) => (s === '' ? undefined : s))
    .pipe(z.string().min(16, 'use at least 16 characters').optional()),
  /** Index requests (POST /v1/index-requests and on-demand gh: reads) per caller per minute. */
  INDEX_REQUESTS_PER_MINUTE: z.coerce.number().int().min(1).default(30),
  /**
   * Crawls of repositories the hub has never indexed (each costs GitHub calls, and a made-up name costs
   * them for nothing) that one caller may start per hour, and all callers together per hour (per process).
   */
  INDEX_NEW_REPOS_PER_HOUR: z.coerce.number().int().min(1).default(60),
  INDEX_NEW_REPOS_PER_HOUR_TOTAL: z.coerce.number().int().min(1).default(1000),
  /** Seconds a repository GitHub answered 404 (or private) for is answered from the hub, without a crawl. */
  INDEX_NOT_FOUND_TTL_S: z.coerce.number().int().min(1).default(600),
  /** Search engine without MEILI_URL: the in-memory index (Postgres answers while it builds), or Postgres alone. */
  SEARCH_ENGINE: z.enum(['memory', 'postgres']).default('memory'),
  /** Memory budget of the in-memory search index, MiB; over it the hub answers from Postgres. */
  SEARCH_INDEX_MB: z.coerce.number().int().min(16).max(65536).default(2048),
  /** Failed authentications (bad, unknown, revoked or expired tokens) per client address per minute; 0 = off. */
  AUTH_FAILURES_MAX: integer(20),
  /** Archives built at once (each holds one skill's files in memory); more wait, then get 503. */
  ARCHIVE_BUILDS: integer(2, { min: 1, max: 64 }),
  /** Memory for built archives kept per revision (they are deterministic), MiB; 0 turns the cache off. */
  ARCHIVE_CACHE_MB: z.coerce.number().min(0).max(65536).default(64),
  /** Trust X-Forwarded-* from a reverse proxy. */
  TRUST_PROXY: flag,
  /** GitHub's REST base (also the crawler's): linking checks credentials against it. */
  GITHUB_API_URL: z.url().default('https://api.github.com'),
  /** The GitHub App and the token keys of linked repositories (@atskills/github-auth). */
  ...GithubAuthEnvSchema.shape,
});

/** Every environment variable the app reads (.env.example and docker-compose.yml are checked against it). */
export const CONFIG_KEYS: readonly string[] = Object.keys(EnvSchema.shape);

/** The hub's configuration: parsed once, frozen, never read from process.env again. */
export interface AppConfig {
  readonly host: string;
  readonly port: number;
  readonly databaseUrl: string | undefined;
  readonly meiliUrl: string | undefined;
  readonly meiliMasterKey: string | undefined;
  readonly meiliIndex: string;
  readonly redisUrl: string | undefined;
  readonly dataDir: string;
  readonly logLevel: LogLevel;
  readonly publicUrl: string;
  readonly bodyLimit: number;
  readonly trustProxy: boolean;
  /** Bytes of the read cache (services/read-cache.ts); 0 when off. */
  readonly readCacheBytes: number;
  /** The engine used when MEILI_URL is not set. */
  readonly searchEngine: 'memory' | 'postgres';
  /** Bytes the in-memory search index may hold. */
  readonly searchIndexBytes: number;
  readonly publishLimits: Readonly<PublishLimits>;
  readonly githubWebhookSecret: string | undefined;
  readonly indexRequestsPerMinute: number;
  /** Crawls of never-indexed repositories per caller and in all per hour, and the not-found cache TTL. */
  readonly indexNewRepos: {
    readonly perCallerPerHour: number;
    readonly totalPerHour: number;
    readonly notFoundTtlS: number;
  };
  /** Failed authentications allowed per client address per minute (0: unlimited). */
  readonly authFailuresMax: number;
  /** Archive builds at once, and bytes of built archives kept in memory. */
  readonly archiveBuilds: number;
  readonly archiveCacheBytes: number;
  /** Linked GitHub repositories: the REST base, the App (if registered) and the token keys. */
  readonly github: { readonly apiUrl: string; readonly auth: GithubAuthSettings };
}

/** Parses the environment into a frozen AppConfig, failing fast with the offending variable's name. */
export function loadConfig(env: Env = process.env): AppConfig {
  const e = parseEnv(EnvSchema, env, 'configuration');
  let githubAuth: GithubAuthSettings;
  try {
    githubAuth = loadGithubAuthSettings(env);
  } catch (error) {
    throw new ConfigError(`Invalid configuration: ${(error as Error).message}`);
  }
  return Object.freeze({
    host: e.HOST,
    port: e.PORT,
    databaseUrl: e.DATABASE_URL,
    meiliUrl: e.MEILI_URL,
    meiliMasterKey: e.MEILI_MASTER_KEY,
    meiliIndex: e.MEILI_INDEX,
    redisUrl: e.REDIS_URL,
    dataDir: e.ATSKILLS_DATA_DIR,
    logLevel: e.LOG_LEVEL,
    publicUrl: (e.PUBLIC_URL ?? `http://${e.HOST.includes(':') ? `[${e.HOST}]` : e.HOST}:${e.PORT}`).replace(
      /\/$/,
      '',
    ),
    bodyLimit: e.BODY_LIMIT,
    trustProxy: e.TRUST_PROXY,
    githubWebhookSecret: e.GITHUB_WEBHOOK_SECRET,
    indexRequestsPerMinute: e.INDEX_REQUESTS_PER_MINUTE,
    indexNewRepos: Object.freeze({
      perCallerPerHour: e.INDEX_NEW_REPOS_PER_HOUR,
      totalPerHour: e.INDEX_NEW_REPOS_PER_HOUR_TOTAL,
      notFoundTtlS: e.INDEX_NOT_FOUND_TTL_S,
    }),
    readCacheBytes: Math.floor(e.READ_CACHE_MB * 1024 * 1024),
    searchEngine: e.SEARCH_ENGINE,
    searchIndexBytes: e.SEARCH_INDEX_MB * 1024 * 1024,
    authFailuresMax: e.AUTH_FAILURES_MAX,
    archiveBuilds: e.ARCHIVE_BUILDS,
    archiveCacheBytes: Math.floor(e.ARCHIVE_CACHE_MB * 1024 * 1024),
    publishLimits: Object.freeze({
      ...DEFAULT_PUBLISH_LIMITS,
      maxCompressedBytes: e.PUBLISH_MAX_ARCHIVE_BYTES,
      maxUnpackedBytes: e.PUBLISH_MAX_UNPACKED_BYTES,
      maxFiles: e.PUBLISH_MAX_FILES,
      maxSkills: e.PUBLISH_MAX_SKILLS,
    }),
    github: Object.freeze({ apiUrl: e.GITHUB_API_URL, auth: githubAuth }),
  });
}
