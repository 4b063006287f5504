import path from 'node:path';
import { sql } from 'drizzle-orm';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import type { DatabaseHandle } from './client.js';

/** The repository's migrations folder (drizzle-kit output). */
export const migrationsFolder = path.resolve(import.meta.dirname, '..', '..', '..', 'migrations');

/** Applies every pending migration from `migrations/` (idempotent; safe at every start-up). */
export async function migrate(handle: DatabaseHandle, folder = migrationsFolder): Promise<void> {
  if (handle.mode === 'embedded') {
    const { migrate: run } = await import('drizzle-orm/pglite/migrator');
    await run(handle.db as never, { migrationsFolder: folder });
  } else {
    const { migrate: run } = await import('drizzle-orm/node-postgres/migrator');
    // Several API replicas may start together: serialise their migrations with an advisory lock.
    await handle.db.execute(sql`select pg_advisory_lock(724242)`);
    try {
      await run(handle.db as never, { migrationsFolder: folder });
    } finally {
      await handle.db.execute(sql`select pg_advisory_unlock(724242)`);
    }
  }
}

/** True when every migration in `migrations/` has been applied (for readiness checks). */
export async function migrationsApplied(handle: DatabaseHandle, folder = migrationsFolder): Promise<boolean> {
  const expected = readMigrationFiles({ migrationsFolder: folder });
  try {
    const result = await handle.db.execute(sql`select hash from drizzle.__drizzle_migrations`);
    const rows = (result as unknown as { rows: { hash: string }[] }).rows;
    const applied = new Set(rows.map((r) => r.hash));
    return expected.every((m) => applied.has(m.hash));
  } catch {
    return false;
  }
}
