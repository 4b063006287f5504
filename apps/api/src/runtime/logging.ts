import { loggableError } from '@atskills/db';
import { type Logger, type LoggerOptions, pino } from 'pino';
import { PinoPretty } from 'pino-pretty';

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

// Query parameters whose values are credentials by name (any name ending in token, key, secret or password),
// and hub and GitHub tokens wherever they appear.
const SECRET_PARAM =
  /([?&](?:[\w.-]*(?:token|key|secret|password|passwd|pwd)|auth|authorization|credentials?)=)[^&#]*/gi;
const HUB_TOKEN = /ask_[0-9A-Za-z]{20,}|\b(?:gh[pousr]_[0-9A-Za-z]{20,}|github_pat_[0-9A-Za-z_]{20,})/g;

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
      // Every logged error: a database error by its driver's words, never the SQL and its parameters (an
      // error handler that forgot loggableError logged `Failed query: ... params: ...`).
      err: (err: unknown) => pino.stdSerializers.err(loggableError(err) as Error),
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

interface PrettyLine {
  [key: string]: unknown;
  req?: { method?: string; url?: string };
  res?: { statusCode?: number };
  responseTime?: number;
}

/**
 * A log line as a person reads it on a terminal: the message, then the request or response in a few words
 * (method and URL, status and time), the other fields inline.
 */
export function prettyMessage(line: PrettyLine, messageKey: string): string {
  const message = String(line[messageKey] ?? '');
  if (line.res?.statusCode !== undefined) {
    const time = typeof line.responseTime === 'number' ? ` in ${line.responseTime.toFixed(1)} ms` : '';
    return `${message}: ${line.res.statusCode}${time}`;
  }
  if (line.req?.method) return `${message}: ${line.req.method} ${line.req.url ?? ''}`;
  return message;
}

/**
 * The one logger of a hub process (API, embedded crawler and scheduler log through children of it): JSON
 * lines, except on a terminal (`pretty`, default: stdout is a TTY), where pino-pretty prints one readable
 * line each. Logs collected by a machine (a pipe, a container, a test) stay JSON.
 */
export function createHubLogger(
  level: string,
  options: { pretty?: boolean; destination?: NodeJS.WritableStream } = {},
): Logger {
  const pretty = options.pretty ?? process.stdout.isTTY === true;
  if (!pretty) {
    return options.destination ? pino(loggerOptions(level), options.destination) : pino(loggerOptions(level));
  }
  // In this thread (not a transport worker): the lines keep their order with the process's own output.
  return pino(
    loggerOptions(level),
    PinoPretty({
      colorize: options.destination === undefined,
      singleLine: true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname,req,res,responseTime',
      messageFormat: (line, messageKey) => prettyMessage(line as PrettyLine, messageKey),
      sync: true,
      ...(options.destination ? { destination: options.destination } : {}),
    }),
  );
}
