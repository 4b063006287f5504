import { readFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { readMigrationFiles } from 'drizzle-orm/migrator';
import type { DatabaseHandle } from './client.js';

/** The repository's migrations folder (drizzle-kit output). */
export const migrationsFolder = path.resolve(import.meta.dirname, '..', '..', '..', 'migrations');

/**
 * Applies every pending migration from `migrations/` (idempotent; safe at every start-up), and throws,
 * naming them, when some are still missing afterwards: drizzle applies only migrations dated after the
 * last one applied, so a journal entry dated out of order would be skipped for good without a word.
 */
export async function migrate(handle: DatabaseHandle, folder = migrationsFolder): Promise<void> {
  await runMigrator(handle, folder);
  const missing = await missingMigrations(handle, folder);
  if (missing.length > 0) {
    throw new Error(
      `Migrations ${missing.join(', ')} were not applied although later ones were (their journal dates, ` +
        'migrations/meta/_journal.json "when", must come after every earlier entry\'s).',
    );
  }
}

async function runMigrator(handle: DatabaseHandle, folder: string): Promise<void> {
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
  try {
    return (await missingMigrations(handle, folder)).length === 0;
  } catch {
    return false;
  }
}

/** The tags of the migrations in `folder` whose SQL the database has not recorded as applied. */
async function missingMigrations(handle: DatabaseHandle, folder: string): Promise<string[]> {
  const expected = readMigrationFiles({ migrationsFolder: folder });
  const result = await handle.db.execute(sql`select hash from drizzle.__drizzle_migrations`);
  const rows = (result as unknown as { rows: { hash: string }[] }).rows;
  const applied = new Set(rows.map((r) => r.hash));
  const journal = readJournal(folder);
  return expected.flatMap((m, i) => (applied.has(m.hash) ? [] : [journal[i]?.tag ?? `#${i}`]));
}

/** The journal's entries in order: each migration's tag and the date drizzle compares. */
export function readJournal(folder = migrationsFolder): { tag: string; when: number }[] {
  const text = readFileSync(path.join(folder, 'meta', '_journal.json'), 'utf8');
  return (JSON.parse(text) as { entries: { tag: string; when: number }[] }).entries;
}
