import { describeDatabaseFailure, EmbeddedDatabaseBusy, rootMessage } from '@atskills/db';
import { oneLine } from '@atskills/protocol';
import { ConfigError } from '../config.js';

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
  // Listening on a HOST that names nothing fails in its lookup, which read as the database's.
  if (e?.syscall === 'getaddrinfo' && (e as { hostname?: string }).hostname === env.HOST) {
    return `HOST ${env.HOST} does not resolve (${e.code}); set HOST to an address of this machine (127.0.0.1, 0.0.0.0).`;
  }
  const database = describeDatabaseFailure(err, env.DATABASE_URL);
  if (database) return oneLine(database);
  return `${oneLine(rootMessage(err))} (LOG_LEVEL=debug shows more)`;
}
