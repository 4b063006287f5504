/**
 * Reading settings from the environment, the same way in every process (hub, crawler, tools): one
 * zod schema per process, parsed once at start-up by parseEnv, frozen, failing with the variable's name.
 * Exported as `@atskills/protocol/config` (not from the core entry): it is shared runtime plumbing, and
 * every app already depends on this package, so no extra package is needed for a few dozen lines.
 */
import { z } from 'zod';

/** A setting with a bad value; the message names each offending variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** An environment-like object: what process.env is, and what tests pass instead. */
export type Env = Record<string, string | undefined>;

/**
 * Parses `env` with `schema` into a frozen value; throws ConfigError `Invalid <label>: VAR: reason; ...`
 * naming every variable that failed.
 */
export function parseEnv<Schema extends z.ZodType>(
  schema: Schema,
  env: Env,
  label: string,
): Readonly<z.output<Schema>> {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(env)'}: ${issue.message}`);
    throw new ConfigError(`Invalid ${label}: ${lines.join('; ')}`);
  }
  return Object.freeze(parsed.data);
}

/** `CRAWL_LOCK_DURATION_MS` -> `crawlLockDurationMs`: how a setting read from the environment is named in code. */
export type SettingName<Variable extends string> = Variable extends `${infer Head}_${infer Tail}`
  ? `${Lowercase<Head>}${Capitalize<SettingName<Tail>>}`
  : Lowercase<Variable>;

/** A parsed environment with every variable renamed to its setting name. */
export type Settings<Parsed> = {
  readonly [Key in keyof Parsed as Key extends string ? SettingName<Key> : never]: Parsed[Key];
};

/** The setting name of one environment variable (the runtime side of SettingName). */
export function settingName(variable: string): string {
  return variable.toLowerCase().replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/**
 * parseEnv, then every variable renamed to its setting name (`RATE_LIMIT_MAX` -> `rateLimitMax`), so the
 * code of every process reads camelCase settings while the environment keeps its conventional names.
 */
export function parseSettings<Schema extends z.ZodObject>(
  schema: Schema,
  env: Env,
  label: string,
): Settings<z.output<Schema>> {
  return toSettings(parseEnv(schema, env, label));
}

/**
 * Values already parsed by a schema, renamed to their setting names and frozen: how a process that parsed
 * one composed schema hands each part its settings without parsing them again.
 */
export function toSettings<Parsed extends object>(parsed: Parsed): Settings<Parsed> {
  return Object.freeze(
    Object.fromEntries(Object.entries(parsed).map(([key, value]) => [settingName(key), value])),
  ) as Settings<Parsed>;
}

/** Text with surrounding space trimmed; unset or blank is undefined. */
export const optionalText = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

/** A URL; unset or blank is undefined. */
export const optionalUrl = z
  .string()
  .trim()
  .transform((s) => (s === '' ? undefined : s))
  .pipe(z.url().optional())
  .optional();

/**
 * A URL of one of `schemes` (without the colon); unset or blank is undefined. `redis://`-shaped text with
 * another scheme would otherwise start and fail later (`http://host:6379` read as a socket path).
 */
export function optionalUrlOf(...schemes: string[]) {
  const expected = schemes.map((s) => `${s}://`).join(' or ');
  return z
    .string()
    .trim()
    .transform((s) => (s === '' ? undefined : s))
    .pipe(
      z
        .url()
        // Runs even when the URL check failed (zod goes on to refinements): a text no URL parses passes here.
        .refine(
          (url) => !URL.canParse(url) || schemes.includes(new URL(url).protocol.slice(0, -1)),
          `must start with ${expected}`,
        )
        .optional(),
    )
    .optional();
}

/** An integer of at least `min` (default 0), `fallback` when unset. */
export function integer(fallback: number, bounds: { min?: number; max?: number } = {}) {
  let schema = z.coerce
    .number()
    .int()
    .min(bounds.min ?? 0);
  if (bounds.max !== undefined) schema = schema.max(bounds.max);
  return schema.default(fallback);
}

/** A positive integer, `fallback` when unset. */
export const positiveInt = (fallback: number) => integer(fallback, { min: 1 });

/** A boolean switch: `true`/`1` or `false`/`0`/blank, `false` when unset. */
export const flag = z
  .enum(['true', 'false', '1', '0', ''])
  .default('false')
  .transform((v) => v === 'true' || v === '1');

/** Log levels pino understands, plus `silent` for tests. */
export const LogLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);
export type LogLevel = z.infer<typeof LogLevel>;

/** Where GitHub's repositories are cloned from (GitHub Enterprise: its host), read by the hub and the crawler. */
export const GIT_BASE_SETTING = {
  GIT_BASE_URL: z
    .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
    .default('https://github.com')
    .describe(
      'The git base: repositories are `<base>/<owner>/<repo>.git`; the crawler clones from it and /SKILLS.md tells shell agents to.',
    ),
} as const;

/**
 * The one shutdown deadline, read by the hub and the crawler worker alike: how long in-flight requests
 * and crawl jobs get to finish after SIGTERM (ms) before they are aborted and released.
 */
export const SHUTDOWN_SETTING = {
  SHUTDOWN_TIMEOUT_MS: integer(25_000).describe(
    'How long in-flight requests and crawl jobs get to finish after SIGTERM (ms), in the hub and the crawler worker, before they are aborted and released.',
  ),
} as const;
