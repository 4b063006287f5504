import { redactUrl } from './client.js';

// Connection-level failures (refused, reset, pool timeout, server shutting down / too many clients):
// the request itself was fine, so these are a 503 the client may retry, not a 500.
const OUTAGE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EPIPE',
  'EHOSTUNREACH',
]);
const OUTAGE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '53400']);
const OUTAGE_MESSAGES = [
  /timeout exceeded when trying to connect/i,
  /connection terminated/i,
  /Connection refused/i,
  // pg's client-side query_timeout: the server or the network went silent mid-query.
  /Query read timeout/i,
  // A transaction's client whose connection broke between its statements.
  /not queryable/i,
];

/** True when `err` (or something in its `cause` chain) says the database cannot be reached. */
export function isDatabaseOutage(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 6; depth++) {
    const x = e as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
    if (typeof x.code === 'string') {
      if (OUTAGE_CODES.has(x.code) || OUTAGE_SQLSTATES.has(x.code) || x.code.startsWith('08')) return true;
    }
    if (typeof x.message === 'string' && OUTAGE_MESSAGES.some((re) => re.test(x.message as string)))
      return true;
    // AggregateError from a dual-stack connect attempt.
    if (Array.isArray(x.errors) && x.errors.some((inner) => isDatabaseOutage(inner))) return true;
    e = x.cause;
  }
  return false;
}

/** The innermost message of an error's `cause` chain (a driver's words, under an ORM's "Failed query"). */
export function rootMessage(err: unknown): string {
  let e = err as { message?: unknown; cause?: unknown } | undefined;
  let message = typeof e?.message === 'string' && e.message ? e.message : String(err);
  for (let depth = 0; e?.cause && depth < 5; depth++) {
    e = e.cause as { message?: unknown; cause?: unknown };
    if (typeof e?.message === 'string' && e.message) message = e.message;
  }
  return message.replace(/\s+/g, ' ').trim();
}

/**
 * One line saying what a process meeting `err` at start-up should do about its database (unreachable, login
 * refused, no such database), naming DATABASE_URL with its password masked; undefined for other errors.
 */
export function describeDatabaseFailure(err: unknown, databaseUrl: string | undefined): string | undefined {
  const code =
    (err as { code?: unknown; cause?: { code?: unknown } } | undefined)?.code ??
    (err as { cause?: { code?: unknown } } | undefined)?.cause?.code;
  // The embedded database makes no network calls: a lookup or connect error came from something else.
  const network = (err as { syscall?: unknown } | undefined)?.syscall;
  if (!databaseUrl && (network === 'getaddrinfo' || network === 'connect')) return undefined;
  if (isDatabaseOutage(err)) {
    const where = databaseUrl ? redactUrl(databaseUrl) : 'the embedded database';
    return `cannot reach the database at ${where} (${rootMessage(err)}); check that it runs and DATABASE_URL is right.`;
  }
  if (typeof code === 'string' && code.startsWith('28')) {
    return `the database refused the login (${rootMessage(err)}); check the user and password in DATABASE_URL.`;
  }
  if (code === '3D000') {
    return `the database named in DATABASE_URL does not exist (${rootMessage(err)}); create it first.`;
  }
  return undefined;
}
