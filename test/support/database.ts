/**
 * A private Postgres database per test file: taken from DATABASE_URL's server (CI and this machine),
 * else from a testcontainers Postgres for contributors who have Docker. Each call creates a fresh
 * database cloned from a migrated template, so test files run in parallel without seeing each other.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  connectPostgres,
  type Database,
  type DatabaseHandle,
  migrate,
  type PostgresOptions,
} from '@atskills/db';
import type { SQL } from 'drizzle-orm';
import pg from 'pg';
import type { TcpProxy } from './tcp-proxy.js';

let serverUrlPromise: Promise<string> | undefined;

/** The admin URL of the Postgres server tests use (DATABASE_URL, else a testcontainer). */
export function postgresServerUrl(): Promise<string> {
  serverUrlPromise ??= (async () => {
    if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
    const probe = 'postgres://postgres@127.0.0.1:5432/postgres';
    if (await canConnect(probe)) return probe;
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql');
    const container = await new PostgreSqlContainer('postgres:16-alpine').start();
    return container.getConnectionUri();
  })();
  return serverUrlPromise;
}

async function canConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function admin<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const TEMPLATE_PREFIX = 'atskills_test_template';

/**
 * Builds (once) the migrated template for the current migration set and returns its name. The name
 * carries a digest of the migrations, so checkouts with different migrations (git worktrees, branches
 * tested side by side) each keep their own template instead of dropping each other's.
 */
async function ensureTemplate(serverUrl: string): Promise<string> {
  const fingerprint = await migrationsFingerprint();
  const template = `${TEMPLATE_PREFIX}_${createHash('sha256').update(fingerprint).digest('hex').slice(0, 12)}`;
  await admin(serverUrl, async (client) => {
    // One process builds the template at a time; the others wait on the lock and then reuse it.
    await client.query('select pg_advisory_lock(424242)');
    try {
      const found = await client.query(
        `select d.datname, shobj_description(d.oid, 'pg_database') as note from pg_database d where datname = $1`,
        [template],
      );
      if (found.rowCount && found.rows[0].note === fingerprint) return;
      if (found.rowCount) {
        await client.query(`update pg_database set datistemplate = false where datname = $1`, [template]);
        await client.query(`drop database if exists ${template} with (force)`);
      }
      await client.query(`create database ${template}`);
      const handle = connectPostgres({ url: withDatabase(serverUrl, template), max: 1 });
      try {
        await migrate(handle);
      } finally {
        await handle.close();
      }
      await client.query(`comment on database ${template} is '${fingerprint}'`);
    } finally {
      await client.query('select pg_advisory_unlock(424242)');
    }
  });
  return template;
}

async function migrationsFingerprint(): Promise<string> {
  const { readMigrationFiles } = await import('drizzle-orm/migrator');
  const { migrationsFolder } = await import('@atskills/db');
  return readMigrationFiles({ migrationsFolder })
    .map((m) => m.hash.slice(0, 12))
    .join('.');
}

export interface TestDatabase extends DatabaseHandle {
  /** Connection URL of this test database. */
  url: string;
  /** Drops the database (call in afterAll). */
  drop(): Promise<void>;
}

/** Creates a fresh, migrated database for one test file. */
export async function createTestDatabase(label = 'test'): Promise<TestDatabase> {
  const serverUrl = await postgresServerUrl();
  const template = await ensureTemplate(serverUrl);
  const name = `atskills_${label.replace(/[^a-z0-9]/gi, '_').toLowerCase()}_${randomBytes(4).toString('hex')}`;
  await admin(serverUrl, (client) => client.query(`create database ${name} template ${template}`));
  const url = withDatabase(serverUrl, name);
  const handle = connectPostgres({ url, max: 5 });
  return {
    ...handle,
    url,
    async drop() {
      await handle.close().catch(() => {});
      await admin(serverUrl, (client) => client.query(`drop database if exists ${name} with (force)`));
    },
  };
}

/** Creates an empty (unmigrated) database, for the migrate-from-zero test. */
export async function createEmptyDatabase(label = 'empty'): Promise<{ url: string; drop(): Promise<void> }> {
  const serverUrl = await postgresServerUrl();
  const name = `atskills_${label}_${randomBytes(4).toString('hex')}`;
  await admin(serverUrl, (client) => client.query(`create database ${name}`));
  return {
    url: withDatabase(serverUrl, name),
    drop: () =>
      admin(serverUrl, (client) => client.query(`drop database if exists ${name} with (force)`)).then(
        () => {},
      ),
  };
}

/** Runs a raw SQL statement and returns its rows as `Row` (drizzle's `Database` leaves raw `execute` results untyped). */
export async function queryRows<Row>(db: Database, statement: SQL): Promise<Row[]> {
  return ((await db.execute(statement)) as { rows: Row[] }).rows;
}

/**
 * A pool to `url` through `proxy`, for tests that cut the database away: small (2 connections, so a
 * connection left checked out soon shows) and quick to give up connecting (1 s); `options` override.
 */
export function connectThroughProxy(
  proxy: TcpProxy,
  url: string,
  options: Partial<PostgresOptions> = {},
): DatabaseHandle {
  return connectPostgres({ url: proxy.rewrite(url), max: 2, connectionTimeoutMs: 1_000, ...options });
}
