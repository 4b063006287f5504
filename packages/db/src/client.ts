import { createHash } from 'node:crypto';
import path from 'node:path';
import { type SQL, sql } from 'drizzle-orm';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import pg from 'pg';
import {
  type IndexChangeEvent,
  type IndexWatch,
  watchEmbeddedIndexChanges,
  watchPostgresIndexChanges,
} from './change-feed.js';
import { acquireEmbeddedLock, type EmbeddedLock } from './embedded-lock.js';
import * as schema from './schema/index.js';

/** The drizzle database, whichever driver is behind it (server Postgres or embedded PGlite). */
export type Database = PgDatabase<PgQueryResultHKT, typeof schema>;

/** An open transaction of a Database. */
export type Tx = Parameters<Parameters<Database['transaction']>[0]>[0];

/** What repository functions run on: the database, or an open transaction of it. */
export type Executor = Database | Tx;

/** A database handle plus what is needed to probe and close it. */
export interface DatabaseHandle {
  db: Database;
  /** `postgres` (a server) or `embedded` (PGlite in a folder). */
  mode: 'postgres' | 'embedded';
  /** Where the data lives: the URL without password, or the embedded data folder. */
  location: string;
  /** The server's connection URL (postgres mode only): for a worker thread to open its own connections. */
  url?: string;
  /** Runs `select 1`; throws when the database is unreachable. */
  ping(): Promise<void>;
  /** Reports every committed write to `skills`, by any process (see change-feed.ts). */
  watchIndexChanges(onEvent: (event: IndexChangeEvent) => void): Promise<IndexWatch>;
  /**
   * The connection pool's counts now (postgres mode only): connections open, idle, and callers waiting
   * for one. Busy connections that stay busy while requests are quiet are leaked ones.
   */
  poolCounts?(): PoolCounts;
  /** The exclusive lock of an embedded database (embedded mode only), released by `close`. */
  embeddedLock?: EmbeddedLock;
  close(): Promise<void>;
}

/** A connection pool's counts (see DatabaseHandle.poolCounts). */
export interface PoolCounts {
  total: number;
  idle: number;
  waiting: number;
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
    // 0 disables both (migrations that build large indexes).
    query_timeout:
      options.queryTimeoutMs ??
      (options.statementTimeoutMs === 0 ? 0 : (options.statementTimeoutMs ?? 30_000) + 2_000),
    application_name: options.applicationName ?? 'atskills',
  });
  // An idle client losing its server (restart, network) must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  // A checked-out client (inside a transaction) whose socket resets emits 'error' too; without a listener
  // that would crash the process. The failing query still rejects, and the pool discards the client.
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = drizzlePg(pool, { schema }) as unknown as Database;
  db.transaction = (run, config) => pooledTransaction(pool, run, config);
  return {
    db,
    mode: 'postgres',
    location: redactUrl(options.url),
    url: options.url,
    async ping() {
      await pool.query('select 1');
    },
    poolCounts: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    async watchIndexChanges(onEvent) {
      return watchPostgresIndexChanges(
        { url: options.url, applicationName: options.applicationName ?? 'atskills' },
        onEvent,
      );
    },
    async close() {
      await pool.end();
    },
  };
}

/** How long a connection whose transaction failed has to show it is idle before it goes back to the pool. */
const SETTLE_MS = 1_000;

/**
 * A transaction on a connection of its own from `pool`, given back in every case: healthy when it is, else
 * discarded. drizzle-orm 0.45's node-postgres `transaction()` sends BEGIN before the try/finally that
 * releases the connection, so a BEGIN that fails (a connection that died while idle, a server gone silent)
 * leaked the pool slot for the life of the process, and `pool.end()` then waited for it forever; and it
 * gives a connection back as healthy after any failure, also one whose query timed out on this side and is
 * still running on the server (drizzle-team/drizzle-orm#6241, #6114, open at 0.45.4). Written here because
 * no released drizzle fixes it; remove once one does.
 */
async function pooledTransaction<T>(
  pool: pg.Pool,
  run: Parameters<Database['transaction']>[0],
  config: Parameters<Database['transaction']>[1],
): Promise<T> {
  const client = await pool.connect();
  let unusable: Error | undefined;
  try {
    // drizzle over one client runs BEGIN / COMMIT / ROLLBACK on it and never releases it: that is ours.
    const onClient = drizzlePg(client, { schema }) as unknown as Database;
    return (await onClient.transaction(run, config)) as T;
  } catch (err) {
    // The failure may have come from the work (rolled back, the connection fine) or from the connection.
    // A ROLLBACK that answers in time shows the connection alive, idle and outside any transaction
    // (outside one it is only a warning); anything else and the pool discards it.
    try {
      // query_timeout per query is pg's (lib/client.js) but missing from its types.
      await client.query({ text: 'rollback', query_timeout: SETTLE_MS } as pg.QueryConfig);
    } catch {
      unusable = err instanceof Error ? err : new Error(String(err));
    }
    throw err;
  } finally {
    client.release(unusable);
  }
}

/**
 * Opens an embedded PGlite database with its data in `dataDir` (created if missing), holding its exclusive
 * lock until `close` (see embedded-lock.ts): `owner` says who holds it (`hub`, `cli`, ...).
 */
export async function connectEmbedded(dataDir: string, owner = 'process'): Promise<DatabaseHandle> {
  const lock = acquireEmbeddedLock(dataDir, owner);
  try {
    return await openEmbedded(dataDir, lock);
  } catch (err) {
    lock.release();
    throw err;
  }
}

async function openEmbedded(dataDir: string, lock: EmbeddedLock): Promise<DatabaseHandle> {
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
    watchIndexChanges: (onEvent) => watchEmbeddedIndexChanges(client, onEvent),
    embeddedLock: lock,
    async close() {
      try {
        await client.close();
      } finally {
        lock.release();
      }
    },
  };
}

/** How to reach the database: a server URL, else an embedded database in a folder, with pool settings. */
export interface DatabaseOptions {
  url?: string;
  embeddedDir?: string;
  max?: number;
  statementTimeoutMs?: number;
  applicationName?: string;
  /** Who holds the embedded database's lock (`hub`, `cli`); embedded mode only. */
  owner?: string;
}

/**
 * What each kind of process asks of its connection. The name shows in pg_stat_activity; the statement
 * timeout bounds one query (0: none).
 */
const PURPOSES = {
  // A request must not wait long on the database: past this its query fails and it answers 503 (also
  // when the server went silent, through the pool's client-side query timeout).
  api: { applicationName: 'atskills-api', statementTimeoutMs: 10_000 },
  // Migrations may build indexes for minutes on a large index: one connection, no statement timeout.
  migrate: { applicationName: 'atskills-migrate', max: 1, statementTimeoutMs: 0 },
  // Operator commands (accounts, tokens) on the hub's machine.
  cli: { applicationName: 'atskills-hub-cli' },
  // A repository job writes its whole index in one transaction; large repositories take a while.
  crawler: { applicationName: 'atskills-crawler', statementTimeoutMs: 120_000 },
} as const satisfies Record<string, Omit<DatabaseOptions, 'url' | 'embeddedDir'>>;

/** The kinds of process that connect to the database. */
export type DatabasePurpose = keyof typeof PURPOSES;

/**
 * The one place connection options are built: DATABASE_URL when given, else the embedded database under
 * `<dataDir>/db`, with the pool settings of `purpose`; `max` overrides the pool size, `owner` names the
 * embedded database's lock holder.
 */
export function databaseOptions(
  purpose: DatabasePurpose,
  where: { url?: string; dataDir?: string },
  extra: { max?: number; owner?: string } = {},
): DatabaseOptions {
  return {
    ...PURPOSES[purpose],
    ...(where.url ? { url: where.url } : {}),
    ...(where.dataDir !== undefined ? { embeddedDir: path.join(where.dataDir, 'db') } : {}),
    ...(extra.max !== undefined ? { max: extra.max } : {}),
    ...(extra.owner !== undefined ? { owner: extra.owner } : {}),
  };
}

/** Connects to `url` when given, else to an embedded database in `embeddedDir`. */
export async function connectDatabase(opts: DatabaseOptions): Promise<DatabaseHandle> {
  if (opts.url) return connectPostgres({ ...opts, url: opts.url });
  if (opts.embeddedDir === undefined) {
    throw new Error('DATABASE_URL is not set, and this process has no folder for an embedded database.');
  }
  return connectEmbedded(opts.embeddedDir, opts.owner);
}

/**
 * Runs one statement with planner settings that apply to it alone (SET LOCAL inside its own transaction).
 * On a server Postgres the client is checked out by hand so that a connection that breaks mid-way is
 * discarded (`release(err)`) instead of going back to the pool half-alive, which would hang `pool.end()`.
 */
export async function executeWithSettings(
  db: Database,
  settings: Record<string, string>,
  statement: SQL,
): Promise<{ rows: Record<string, unknown>[] }> {
  const set = Object.entries(settings).map(
    ([name, value]) => `set local ${name} = '${value.replace(/'/g, "''")}'`,
  );
  const pool = (db as unknown as { $client?: unknown }).$client;
  if (pool instanceof pg.Pool) {
    const query = (
      db as unknown as { dialect: { sqlToQuery(s: SQL): { sql: string; params: unknown[] } } }
    ).dialect.sqlToQuery(statement);
    const client = await pool.connect();
    let failure: Error | undefined;
    try {
      // One round trip for the transaction and its settings (simple protocol allows several statements).
      await client.query(['begin', ...set].join('; '));
      // A named statement is parsed once per connection, and Postgres may settle on a generic plan.
      const name = `atskills_${createHash('sha1').update(query.sql).digest('hex').slice(0, 16)}`;
      const result = await client.query({ name, text: query.sql, values: query.params });
      await client.query('commit');
      return { rows: result.rows as Record<string, unknown>[] };
    } catch (err) {
      failure = err as Error;
      throw err;
    } finally {
      client.release(failure);
    }
  }
  return (await db.transaction(async (tx) => {
    for (const s of set) await tx.execute(sql.raw(s));
    return tx.execute(statement);
  })) as unknown as { rows: Record<string, unknown>[] };
}
