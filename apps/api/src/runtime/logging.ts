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

// Query parameters whose values are credentials by name, and hub tokens wherever they appear.
const SECRET_PARAM = /([?&](?:access_token|token|api_key|apikey|key|secret|password|auth)=)[^&#]*/gi;
const HUB_TOKEN = /ask_[0-9A-Za-z]{20,}/g;

/**
 * A URL as request logs show it: the values of credential-named query parameters and anything shaped like
 * a hub token are replaced, so a token put in a query string (by mistake or by a client) never reaches logs.
 */
export function redactRequestUrl(url: string): string {
  return url.replace(SECRET_PARAM, '$1[redacted]').replace(HUB_TOKEN, '[redacted]');
}

interface LoggedRequest {
  method?: string;
  url?: string;
  hostname?: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

/** The hub's pino options: JSON lines, ISO times, secrets redacted (also in request URLs). */
export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    serializers: {
      req: (req: LoggedRequest) => ({
        method: req.method,
        url: typeof req.url === 'string' ? redactRequestUrl(req.url) : req.url,
        host: req.host ?? req.hostname,
        remoteAddress: req.ip,
        remotePort: req.socket?.remotePort,
      }),
    },
  };
}

/** The one logger of a hub process (API, embedded crawler and scheduler log through children of it). */
export function createHubLogger(level: string): Logger {
  return pino(loggerOptions(level));
}
