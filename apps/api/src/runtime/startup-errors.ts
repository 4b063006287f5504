import { EmbeddedDatabaseBusy, redactUrl } from '@atskills/db';
import { oneLine } from '@atskills/protocol';
import { ConfigError } from '../config.js';
import { isDatabaseOutage } from '../plugins/errors.js';

/**
 * One line that says what went wrong at start-up and what to do about it (a port in use, a database that
 * cannot be reached, a bad setting, a data folder another hub holds); never a stack trace. `env` gives the
 * settings the process ran with, to name them.
 */
export function describeStartupError(err: unknown, env: Record<string, string | undefined> = {}): string {
  const e = err as NodeJS.ErrnoException & { address?: string; port?: number };
  if (err instanceof ConfigError || err instanceof EmbeddedDatabaseBusy) return oneLine(e.message);
  if (e?.code === 'EADDRINUSE') {
    return `port ${e.port ?? env.PORT ?? ''} on ${e.address ?? env.HOST ?? ''} is already in use (another hub?); stop that process or set PORT to a free port.`;
  }
  if (e?.code === 'EACCES' && e.syscall === 'listen') {
    return `not allowed to listen on ${e.address ?? env.HOST ?? ''}:${e.port ?? env.PORT ?? ''}; set PORT above 1023 or run with the needed rights.`;
  }
  if (e?.code === 'EADDRNOTAVAIL') {
    return `HOST ${e.address ?? env.HOST ?? ''} is not an address of this machine; set HOST to one (127.0.0.1, 0.0.0.0).`;
  }
  if (isDatabaseOutage(err)) {
    const where = env.DATABASE_URL ? redactUrl(env.DATABASE_URL) : 'the embedded database';
    return `cannot reach the database at ${where} (${oneLine(rootMessage(err))}); check that it runs and DATABASE_URL is right.`;
  }
  if ((e?.code ?? '').startsWith('28')) {
    return `the database refused the login (${oneLine(rootMessage(err))}); check the user and password in DATABASE_URL.`;
  }
  if (e?.code === '3D000') {
    return `the database named in DATABASE_URL does not exist (${oneLine(rootMessage(err))}); create it first.`;
  }
  return `${oneLine(rootMessage(err))} (LOG_LEVEL=debug shows more)`;
}

function rootMessage(err: unknown): string {
  let e = err as { message?: unknown; cause?: unknown } | undefined;
  let message = typeof e?.message === 'string' && e.message ? e.message : String(err);
  for (let depth = 0; e?.cause && depth < 5; depth++) {
    e = e.cause as { message?: unknown; cause?: unknown };
    if (typeof e?.message === 'string' && e.message) message = e.message;
  }
  return message;
}
