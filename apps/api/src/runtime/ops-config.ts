import {
  type Env,
  flag,
  integer,
  parseSettings,
  type Settings,
  SHUTDOWN_SETTING,
  toSettings,
} from '@atskills/protocol/config';
import { parse as parseDuration } from '@lukeed/ms';
import { z } from 'zod';

/**
 * Settings of running the hub as a service (rate limits, CORS, shutdown, re-crawl schedule, demo data).
 * Kept apart from config.ts (what the app serves) because only the runtime wiring reads them.
 */
export const OpsEnvSchema = z.object({
  RATE_LIMIT_MAX: integer(600).describe(
    'Requests per window per verified token (or per IP without one); 0 turns rate limiting off.',
  ),
  RATE_LIMIT_WINDOW: z
    .string()
    .trim()
    .min(1)
    .default('1 minute')
    // Read here as @fastify/rate-limit reads it (@lukeed/ms), so that a window it cannot read stops the start
    // naming the variable: the plugin took any text and failed every request with a 500.
    .transform((v, ctx) => {
      const ms = /^\d+$/.test(v) ? Number(v) : parseDuration(v);
      if (ms !== undefined && Number.isFinite(ms) && ms > 0) return ms;
      ctx.addIssue({
        code: 'custom',
        message: `"${v}" is no duration: write milliseconds (60000) or one amount and unit (1 minute, 30s, 2h)`,
      });
      return z.NEVER;
    })
    .describe('The rate-limit window: milliseconds, or text such as `1 minute`, `30s`.'),
  CORS_ORIGINS: z
    .string()
    .default('*')
    // A browser sends its Origin as scheme://host[:port] and @fastify/cors compares it as text: an entry of
    // another shape (a bare host, a trailing path) matched nothing and every browser call failed silently.
    .transform((v, ctx) => {
      const origins: string[] = [];
      for (const entry of v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)) {
        const origin = entry === '*' ? entry : originOf(entry);
        if (origin === undefined) {
          ctx.addIssue({
            code: 'custom',
            message: `"${entry}" is no origin: write scheme://host[:port] (https://app.example.com), or * for any`,
          });
          return z.NEVER;
        }
        origins.push(origin);
      }
      return origins;
    })
    .describe(
      'Origins browsers may call the API from, comma-separated, each `scheme://host[:port]`; `*` for any (tokens, not cookies, authenticate).',
    ),
  ...SHUTDOWN_SETTING,
  RECRAWL_TICK_MS: integer(300_000).describe(
    'How often the scheduler looks for repositories due for a re-crawl (ms); 0 turns scheduled re-crawls off.',
  ),
  METRICS_PUBLIC: flag.describe(
    'Serve `/metrics` to anyone; otherwise only to hub administrators (admin-scoped token).',
  ),
  API_WORKERS: integer(1, { min: 1, max: 64 }).describe(
    'Hub processes sharing the port (node:cluster), each a full replica with its own search index and suggestion model (about 1.0 GiB at 54,000 skills); more than 1 needs DATABASE_URL.',
  ),
  ATSKILLS_DEMO: flag.describe(
    'Load the example skills of `demo/` at start-up (same as `npm start -- --demo`).',
  ),
});

/**
 * The origin a browser would send for `text` (`scheme://host[:port]`, host lowercased, no trailing slash), or
 * undefined when `text` is not one (a bare host, a path, a query).
 */
function originOf(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  const plain = url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password;
  return plain && (url.protocol === 'http:' || url.protocol === 'https:') ? url.origin : undefined;
}

/** The ops settings, named in camelCase (`RATE_LIMIT_MAX` -> `rateLimitMax`). */
export type OpsConfig = Settings<z.infer<typeof OpsEnvSchema>>;

/** The environment variables the runtime reads (documented in .env.example). */
export const OPS_CONFIG_KEYS = Object.keys(OpsEnvSchema.shape) as (keyof z.infer<typeof OpsEnvSchema>)[];

/** Parses the ops settings, naming the offending variable on error. */
export function loadOpsConfig(env: Env = process.env): OpsConfig {
  return parseSettings(OpsEnvSchema, env, 'configuration');
}

/** The ops settings of variables already parsed by a schema that spreads OpsEnvSchema (the hub's composed one). */
export function opsConfigFrom(values: z.output<typeof OpsEnvSchema>): OpsConfig {
  return toSettings(Object.fromEntries(OPS_CONFIG_KEYS.map((key) => [key, values[key]]))) as OpsConfig;
}
