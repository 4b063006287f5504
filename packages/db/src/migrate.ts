import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import type { DatabaseHandle } from './client.js';

/** The repository's migrations folder (drizzle-kit output). */
export const migrationsFolder = path.resolve(import.meta.dirname, '..', '..', '..', 'migrations');

/**
 * Applies every pending migration from `migrations/` (idempotent; safe at every start-up). Drizzle applies
 * only migrations dated after the last one applied, so an entry shipped dated out of order (0010 once came
 * dated before 0009) is skipped for good on a database that had the earlier one; each migration still
 * missing afterwards is applied here, in journal order, as drizzle would have.
 */
export async function migrate(handle: DatabaseHandle, folder = migrationsFolder): Promise<void> {
  if (handle.mode === 'embedded') {
    const { migrate: run } = await import('drizzle-orm/pglite/migrator');
    await run(handle.db as never, { migrationsFolder: folder });
    await applySkipped(handle, folder);
    return;
  }
  const { migrate: run } = await import('drizzle-orm/node-postgres/migrator');
  // Several API replicas may start together: serialise their migrations with an advisory lock.
  await handle.db.execute(sql`select pg_advisory_lock(724242)`);
  try {
    await run(handle.db as never, { migrationsFolder: folder });
    await applySkipped(handle, folder);
  } finally {
    await handle.db.execute(sql`select pg_advisory_unlock(724242)`);
  }
}

/** Applies, each in a transaction of its own and recorded as drizzle records it, the migrations drizzle skipped. */
async function applySkipped(handle: DatabaseHandle, folder: string): Promise<void> {
  const applied = await appliedHashes(handle);
  for (const migration of readMigrationFiles({ migrationsFolder: folder })) {
    if (applied.has(migration.hash)) continue;
    await handle.db.transaction(async (tx) => {
      for (const statement of migration.sql) {
        if (statement.trim()) await tx.execute(sql.raw(statement));
      }
      await tx.execute(
        sql`insert into drizzle.__drizzle_migrations (hash, created_at) values (${migration.hash}, ${migration.folderMillis})`,
      );
    });
  }
}

/** The hashes of the migrations the database records as applied. */
async function appliedHashes(handle: DatabaseHandle): Promise<Set<string>> {
  const result = await handle.db.execute(sql`select hash from drizzle.__drizzle_migrations`);
  return new Set((result as unknown as { rows: { hash: string }[] }).rows.map((r) => r.hash));
}

/** True when every migration in `migrations/` has been applied (for readiness checks). */
export async function migrationsApplied(handle: DatabaseHandle, folder = migrationsFolder): Promise<boolean> {
  try {
    return (await missingMigrations(handle, folder)).length === 0;
  } catch {
    return false;
  }
}

/** The tags of the migrations in `folder` whose SQL the database has not recorded as applied. */
async function missingMigrations(handle: DatabaseHandle, folder: string): Promise<string[]> {
  const applied = await appliedHashes(handle);
  const journal = readJournal(folder);
  return readMigrationFiles({ migrationsFolder: folder }).flatMap((m, i) =>
    applied.has(m.hash) ? [] : [journal[i]?.tag ?? `#${i}`],
  );
}

/** The journal's entries in order: each migration's tag and the date drizzle compares. */
export function readJournal(folder = migrationsFolder): { tag: string; when: number }[] {
  const text = readFileSync(path.join(folder, 'meta', '_journal.json'), 'utf8');
  return (JSON.parse(text) as { entries: { tag: string; when: number }[] }).entries;
}
