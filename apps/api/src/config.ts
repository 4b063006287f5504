import {
  GithubAuthEnvSchema,
  type GithubAuthSettings,
  type GithubAuthValues,
  githubAuthFrom,
} from '@atskills/github-auth';
import {
  ConfigError,
  type Env,
  flag,
  GIT_BASE_SETTING,
  integer,
  LogLevel,
  optionalText,
  optionalUrl,
  optionalUrlOf,
  parseEnv,
} from '@atskills/protocol/config';
import { z } from 'zod';
import { DEFAULT_PUBLISH_LIMITS, type PublishLimits } from './services/publish/limits.js';
import { type Reranker, weighsService } from './suggest/abstain.js';
import { loadRerankerFile } from './suggest/reranker-file.js';

export { ConfigError } from '@atskills/protocol/config';

/** The environment variables the hub reads, validated once at start-up (docs/settings.md is generated from it). */
export const HubEnvSchema = z.object({
  HOST: z
    .string()
    .trim()
    .min(1)
    .default('127.0.0.1')
    .describe('The address the hub listens on (`0.0.0.0` in the image).'),
  PORT: integer(8080, { max: 65535 }).describe('The port the hub listens on.'),
  DATABASE_URL: optionalUrlOf('postgres', 'postgresql').describe(
    'A PostgreSQL server; unset, the hub runs an embedded Postgres (PGlite) in `$ATSKILLS_DATA_DIR/db`.',
  ),
  MEILI_URL: optionalUrl.describe(
    'Search with Meilisearch at this address (Postgres answers while it is down); unset, SEARCH_ENGINE decides.',
  ),
  MEILI_MASTER_KEY: optionalText
    .refine(
      (key) => key === undefined || Buffer.byteLength(key) >= 16,
      'Meilisearch refuses a master key under 16 bytes',
    )
    .describe("Meilisearch's master key (16 bytes or more)."),
  MEILI_INDEX: z
    .string()
    .trim()
    .min(1)
    .default('skills')
    .describe('The Meilisearch index the hub writes and reads.'),
  REDIS_URL: optionalUrlOf('redis', 'rediss').describe(
    'Redis for BullMQ crawl queues and shared rate-limit counters; unset, crawl jobs run in the hub process. Redis must use `maxmemory-policy noeviction`.',
  ),
  ATSKILLS_DATA_DIR: z
    .string()
    .trim()
    .min(1)
    .default('./.data')
    .describe('The local data folder: the embedded database, its lock and the admin socket.'),
  LOG_LEVEL: LogLevel.default('info').describe('pino level (`fatal` to `trace`), or `silent`.'),
  PUBLIC_URL: optionalUrl.meta({
    description: 'The address people reach the hub at (links in pages, `SKILLS.md`, problem `instance`s).',
    defaultText: '`http://HOST:PORT`',
  }),
  BODY_LIMIT: integer(1_048_576, { min: 1024 }).describe(
    'Largest request body accepted by default (bytes); the publish route sets its own limit.',
  ),
  PUBLISH_MAX_ARCHIVE_BYTES: integer(DEFAULT_PUBLISH_LIMITS.maxCompressedBytes, { min: 1024 }).describe(
    'Largest gzip body of a publish (bytes).',
  ),
  PUBLISH_MAX_UNPACKED_BYTES: integer(DEFAULT_PUBLISH_LIMITS.maxUnpackedBytes, { min: 1024 }).describe(
    'Largest unpacked size of a published collection (bytes).',
  ),
  PUBLISH_MAX_FILES: integer(DEFAULT_PUBLISH_LIMITS.maxFiles, { min: 1 }).describe(
    'Most files in a published collection.',
  ),
  PUBLISH_MAX_SKILLS: integer(DEFAULT_PUBLISH_LIMITS.maxSkills, { min: 1 }).describe(
    'Most skills in a published collection.',
  ),
  PUBLISH_CONCURRENCY: integer(2, { min: 1, max: 64 }).describe(
    'Publishes a hub process checks at once (each holds its archive, up to twice PUBLISH_MAX_ARCHIVE_BYTES, in memory), each once its body has arrived; as many more wait, then get `503` with `Retry-After`.',
  ),
  READ_CACHE_MB: z.coerce
    .number()
    .min(0)
    .max(65536)
    .default(32)
    .describe(
      'Memory for in-process answers of hot reads (search pages, live revisions), MiB, dropped on every index change; 0 turns it off.',
    ),
  GITHUB_WEBHOOK_SECRET: z
    .string()
    .optional()
    .transform((s) => (s === '' ? undefined : s))
    .pipe(z.string().min(16, 'use at least 16 characters').optional())
    .describe(
      'Secret of the GitHub webhooks (`X-Hub-Signature-256`), 16 characters or more; unset, `POST /v1/webhooks/github` answers 503.',
    ),
  INDEX_REQUESTS_PER_MINUTE: z.coerce
    .number()
    .int()
    .min(1)
    .default(30)
    .describe('Index requests (`POST /v1/index-requests` and on-demand `gh:` reads) per caller per minute.'),
  INDEX_NEW_REPOS_PER_HOUR: z.coerce
    .number()
    .int()
    .min(1)
    .default(60)
    .describe(
      'Crawls of repositories the hub has never indexed (each costs GitHub calls; a made-up name costs them for nothing) that one caller may start per hour.',
    ),
  INDEX_NEW_REPOS_PER_HOUR_TOTAL: z.coerce
    .number()
    .int()
    .min(1)
    .default(1000)
    .describe('Crawls of never-indexed repositories all callers together may start per hour, per process.'),
  INDEX_NOT_FOUND_TTL_S: z.coerce
    .number()
    .int()
    .min(1)
    .default(600)
    .describe(
      'Seconds a repository GitHub answered 404 (or private) for is answered from the hub, without a crawl.',
    ),
  SEARCH_ENGINE: z
    .enum(['memory', 'postgres'])
    .default('memory')
    .describe(
      'Search engine without MEILI_URL: `memory`, the in-memory index (Postgres answers while it builds), or `postgres` alone.',
    ),
  SEARCH_INDEX_MB: z.coerce
    .number()
    .int()
    .min(16)
    .max(65536)
    .default(2048)
    .describe('Memory budget of the in-memory search index, MiB; over it the hub answers from Postgres.'),
  SUGGEST_MODEL_MB: z.coerce
    .number()
    .int()
    .min(16)
    .max(65536)
    .default(1024)
    .describe('Memory budget of the suggestion model (SPEC 2.7), MiB; over it `/v1/suggest` answers 503.'),
  INDEX_SNAPSHOTS: z
    .enum(['true', 'false', '1', '0'])
    .default('true')
    .transform((v) => v === 'true' || v === '1')
    .describe(
      'Store the in-memory search index and the suggestion model in Postgres after they build, and load them at start instead of building them again (`false`: build at every start).',
    ),
  SUGGEST_BUILD_THREAD_MIN_SKILLS: z.coerce
    .number()
    .int()
    .min(0)
    .default(5000)
    .describe(
      'Build the suggestion model in a worker thread (another core; this one keeps answering) when no stored one can be loaded and the index holds at least this many skills; it is stored and loaded from there. Needs a Postgres server and `INDEX_SNAPSHOTS`; `0`: always build in the main thread.',
    ),
  EMBEDDINGS_URL: optionalUrl.describe(
    'An OpenAI-compatible embeddings service (its base URL or its `/v1/embeddings` URL) for suggestions; unset, the model the hub builds from its own index.',
  ),
  EMBEDDINGS_MODEL: optionalText.describe(
    'The `model` sent to EMBEDDINGS_URL (set without it, the start fails).',
  ),
  EMBEDDINGS_API_KEY: optionalText.describe(
    'Bearer key sent to EMBEDDINGS_URL (set without it, the start fails).',
  ),
  SUGGEST_RERANKER: optionalText.describe(
    "A reranker file for suggestions, fitted to the hub's embeddings service (`bench/suggest/fit-rerank.py --json`); unset, the shipped reranker. One weighing the service's evidence needs EMBEDDINGS_URL.",
  ),
  AUTH_FAILURES_MAX: integer(20).describe(
    'Failed authentications (bad, unknown, revoked or expired tokens) per client address per minute before `429`; 0 = off.',
  ),
  ARCHIVE_BUILDS: integer(2, { min: 1, max: 64 }).describe(
    "Archives built at once (each holds one skill's files in memory); more wait, then get `503` with `Retry-After`.",
  ),
  ARCHIVE_CACHE_MB: z.coerce
    .number()
    .min(0)
    .max(65536)
    .default(64)
    .describe(
      'Memory for built archives kept per revision (they are deterministic), MiB; 0 turns the cache off.',
    ),
  TRUST_PROXY: flag.describe('Trust `X-Forwarded-*` from a reverse proxy or load balancer.'),
  GITHUB_API_URL: z
    .url()
    .default('https://api.github.com')
    .describe(
      "GitHub's REST base (GitHub Enterprise: `https://HOST/api/v3`); the crawler and link checks use it.",
    ),
  ...GIT_BASE_SETTING,
  /** The GitHub App and the token keys of linked repositories (@atskills/github-auth). */
  ...GithubAuthEnvSchema.shape,
});

/** Every environment variable the app reads (.env.example and docker-compose.yml are checked against it). */
export const CONFIG_KEYS: readonly string[] = Object.keys(HubEnvSchema.shape);

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
  /** Bytes the suggestion model may hold. */
  readonly suggestModelBytes: number;
  /** Whether the in-memory search index and the suggestion model are stored in Postgres and loaded at start. */
  readonly indexSnapshots: boolean;
  /** Skills from which the suggestion model builds in a worker thread (0: never). */
  readonly suggestBuildThreadMinSkills: number;
  /** The embeddings service of suggestions, when one is configured. */
  readonly embeddings:
    | { readonly url: string; readonly model: string | undefined; readonly apiKey: string | undefined }
    | undefined;
  /** The reranker of suggestions when SUGGEST_RERANKER names one (else the shipped one). */
  readonly suggestReranker: Reranker | undefined;
  readonly publishLimits: Readonly<PublishLimits>;
  /** Publishes read and checked at once (PUBLISH_CONCURRENCY). */
  readonly publishConcurrency: number;
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
  readonly github: {
    readonly apiUrl: string;
    readonly gitBaseUrl: string;
    readonly auth: GithubAuthSettings;
  };
}

/** The hub's variables as parsed, before AppConfig is derived from them. */
export type HubValues = z.output<typeof HubEnvSchema>;

/**
 * Parses the environment into a frozen AppConfig, failing fast with the offending variable's name (tools
 * that need only the AppConfig; the hub process parses its composed schema, runtime/hub-settings.ts).
 */
export function loadConfig(env: Env = process.env): AppConfig {
  const e = parseEnv(HubEnvSchema, env, 'configuration');
  return appConfigFrom(e, hubGithubAuth(e));
}

/** The linked repositories' settings checked from parsed variables, a bad one failing as a ConfigError. */
export function hubGithubAuth(e: GithubAuthValues): GithubAuthSettings {
  try {
    return githubAuthFrom(e);
  } catch (error) {
    throw new ConfigError(`Invalid configuration: ${(error as Error).message}`);
  }
}

/** The reranker file SUGGEST_RERANKER names, read and checked at start-up (a bad one fails as a ConfigError). */
function suggestReranker(path: string, hasEmbeddings: boolean): Reranker {
  let reranker: Reranker;
  try {
    reranker = loadRerankerFile(path);
  } catch (error) {
    throw new ConfigError(`Invalid configuration: SUGGEST_RERANKER: ${(error as Error).message}`);
  }
  if (weighsService(reranker) && !hasEmbeddings) {
    throw new ConfigError(
      `Invalid configuration: SUGGEST_RERANKER: ${path} weighs the embeddings service's evidence (service, partService) but EMBEDDINGS_URL is not set`,
    );
  }
  return reranker;
}

/** The AppConfig of variables already parsed (by HubEnvSchema or a schema that spreads it). */
export function appConfigFrom(e: HubValues, githubAuth: GithubAuthSettings): AppConfig {
  // Without a service to send them to these were dropped unread: a hub set up for a service it was never
  // told the address of ran on its own model, saying nothing.
  for (const name of ['EMBEDDINGS_MODEL', 'EMBEDDINGS_API_KEY'] as const) {
    if (e[name] !== undefined && !e.EMBEDDINGS_URL) {
      throw new ConfigError(
        `Invalid configuration: ${name}: set EMBEDDINGS_URL too (it configures that service)`,
      );
    }
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
    suggestModelBytes: e.SUGGEST_MODEL_MB * 1024 * 1024,
    indexSnapshots: e.INDEX_SNAPSHOTS,
    suggestBuildThreadMinSkills: e.SUGGEST_BUILD_THREAD_MIN_SKILLS,
    embeddings: e.EMBEDDINGS_URL
      ? Object.freeze({
          url: e.EMBEDDINGS_URL,
          model: e.EMBEDDINGS_MODEL,
          apiKey: e.EMBEDDINGS_API_KEY,
        })
      : undefined,
    suggestReranker: e.SUGGEST_RERANKER ? suggestReranker(e.SUGGEST_RERANKER, !!e.EMBEDDINGS_URL) : undefined,
    authFailuresMax: e.AUTH_FAILURES_MAX,
    archiveBuilds: e.ARCHIVE_BUILDS,
    publishConcurrency: e.PUBLISH_CONCURRENCY,
    archiveCacheBytes: Math.floor(e.ARCHIVE_CACHE_MB * 1024 * 1024),
    publishLimits: Object.freeze({
      ...DEFAULT_PUBLISH_LIMITS,
      maxCompressedBytes: e.PUBLISH_MAX_ARCHIVE_BYTES,
      maxUnpackedBytes: e.PUBLISH_MAX_UNPACKED_BYTES,
      maxFiles: e.PUBLISH_MAX_FILES,
      maxSkills: e.PUBLISH_MAX_SKILLS,
    }),
    github: Object.freeze({ apiUrl: e.GITHUB_API_URL, gitBaseUrl: e.GIT_BASE_URL, auth: githubAuth }),
  });
}
