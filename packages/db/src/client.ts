import path from 'node:path';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import pg from 'pg';
import * as schema from './schema/index.js';

/** The drizzle database, whichever driver is behind it (server Postgres or embedded PGlite). */
export type Database = PgDatabase<PgQueryResultHKT, typeof schema>;

/** A database handle plus what is needed to probe and close it. */
export interface DatabaseHandle {
  db: Database;
  /** `postgres` (a server) or `embedded` (PGlite in a folder). */
  mode: 'postgres' | 'embedded';
  /** Where the data lives: the URL without password, or the embedded data folder. */
  location: string;
  /** Runs `select 1`; throws when the database is unreachable. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface PostgresOptions {
  url: string;
  /** Pool size. */
  max?: number;
  /** Fail a query that waits longer than this for a connection or runs longer (ms). */
  statementTimeoutMs?: number;
  connectionTimeoutMs?: number;
  /**
   * Client-side bound on a query's answer (ms), default statementTimeoutMs + 2 s. statement_timeout is
   * enforced by the server, so it cannot end a query whose server or network went silent; this can.
   */
  queryTimeoutMs?: number;
  applicationName?: string;
}

/** Hides the password of a connection URL for logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '<unparsable url>';
  }
}

/** Connects to a Postgres server through a pg pool. */
export function connectPostgres(options: PostgresOptions): DatabaseHandle {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 5_000,
    statement_timeout: options.statementTimeoutMs ?? 30_000,
    query_timeout: options.queryTimeoutMs ?? (options.statementTimeoutMs ?? 30_000) + 2_000,
    application_name: options.applicationName ?? 'atskills',
  });
  // An idle client losing its server (restart, network) must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const db = drizzlePg(pool, { schema }) as unknown as Database;
  return {
    db,
    mode: 'postgres',
    location: redactUrl(options.url),
    async ping() {
      await pool.query('select 1');
    },
    async close() {
      await pool.end();
    },
  };
}

/** Opens an embedded PGlite database with its data in `dataDir` (created if missing). */
export async function connectEmbedded(dataDir: string): Promise<DatabaseHandle> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
  const { drizzle: drizzlePglite } = await import('drizzle-orm/pglite');
  const client = await PGlite.create({ dataDir: path.resolve(dataDir), extensions: { pg_trgm } });
  const db = drizzlePglite(client, { schema }) as unknown as Database;
  return {
    db,
    mode: 'embedded',
    location: path.resolve(dataDir),
    async ping() {
      await client.query('select 1');
    },
    async close() {
      await client.close();
    },
  };
}

/** Connects to DATABASE_URL when given, else to an embedded database in `embeddedDir`. */
export async function connectDatabase(opts: {
  url?: string;
  embeddedDir: string;
  max?: number;
  statementTimeoutMs?: number;
  applicationName?: string;
}): Promise<DatabaseHandle> {
  if (opts.url) return connectPostgres({ ...opts, url: opts.url });
  return connectEmbedded(opts.embeddedDir);
}
