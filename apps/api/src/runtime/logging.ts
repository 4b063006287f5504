import { type Logger, type LoggerOptions, pino } from 'pino';

/**
 * Paths pino blanks in every log line: credentials in request headers, token-bearing fields and
 * connection settings. Request logs carry method and URL only (Fastify's serializers), and database and
 * Redis URLs are logged through redactUrl; this is the net under those habits.
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'authorization',
  'token',
  'password',
  'secret',
  '*.token',
  '*.password',
  '*.secret',
  '*.authorization',
  '*.GITHUB_TOKEN',
  '*.MEILI_MASTER_KEY',
  '*.apiKey',
  'err.request.headers.authorization',
  'err.config.headers.authorization',
];

/** The hub's pino options: JSON lines, ISO times, secrets redacted. */
export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
}

/** The one logger of a hub process (API, embedded crawler and scheduler log through children of it). */
export function createHubLogger(level: string): Logger {
  return pino(loggerOptions(level));
}
