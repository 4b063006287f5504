import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmptyDatabase } from '../../../test/support/database.js';
import {
  connectEmbedded,
  connectPostgres,
  type DatabaseHandle,
  type IndexChangeEvent,
  migrate,
  migrationsApplied,
  migrationsFolder,
  readJournal,
  skills,
} from '../src/index.js';

/** Rows of a raw query, whichever driver ran it. */
async function rows(handle: DatabaseHandle, query: ReturnType<typeof sql>): Promise<unknown[]> {
  return ((await handle.db.execute(query)) as unknown as { rows: unknown[] }).rows;
}

/**
 * Migrates an empty database from zero (twice: idempotent), writes one skill and checks what the hub relies
 * on: full-text and typo search, the change feed hearing the write, and the identities a skill leaves.
 */
async function checkFromZero(handle: DatabaseHandle): Promise<void> {
  expect(await migrationsApplied(handle)).toBe(false);
  await migrate(handle);
  await migrate(handle);
  expect(await migrationsApplied(handle)).toBe(true);

  const events: IndexChangeEvent[] = [];
  const watch = await handle.watchIndexChanges((event) => events.push(event));
  try {
    await expect.poll(() => events.includes('live'), { timeout: 10_000 }).toBe(true);
    await handle.db.insert(skills).values({
      identity: 'gh:o/r/pdf',
      source: 'gh',
      owner: 'o',
      container: 'r',
      path: 'pdf',
      name: 'pdf-forms',
      description: 'Fill and merge PDF forms.',
      revision: 'abc',
    });
    await expect.poll(() => events.includes('change'), { timeout: 10_000 }).toBe(true);
  } finally {
    await watch.close();
  }
  const hit = sql`select identity from skills where search @@ websearch_to_tsquery('english', 'merging forms')`;
  expect(await rows(handle, hit)).toHaveLength(1);
  expect(await rows(handle, sql`select identity from skills where name % 'pdf-froms'`)).toHaveLength(1);
  // The identity a skill leaves (renamed, then deleted) is kept for the change feed, with its container.
  await handle.db.execute(sql`update skills set identity = 'gh:o/r2/pdf', container = 'r2'`);
  await handle.db.execute(sql`update skills set stars = 3`);
  await handle.db.execute(sql`delete from skills`);
  expect(
    await rows(handle, sql`select identity, container from skill_tombstones order by left_at, identity`),
  ).toEqual([
    { identity: 'gh:o/r/pdf', container: 'r' },
    { identity: 'gh:o/r2/pdf', container: 'r2' },
  ]);
}

describe('migrations', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
  });

  it('migrate an empty Postgres database from zero, idempotently', async () => {
    const empty = await createEmptyDatabase('migrate');
    cleanups.push(empty.drop);
    const handle = connectPostgres({ url: empty.url, max: 2 });
    cleanups.push(() => handle.close());
    await checkFromZero(handle);
  });

  it('migrate an embedded PGlite database with the same migrations and search', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'atskills-pglite-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const handle = await connectEmbedded(dir);
    cleanups.push(() => handle.close());
    await checkFromZero(handle);
  });

  it('dates each journal entry after every earlier one, so no migration is skipped on an upgrade', () => {
    const journal = readJournal();
    for (let i = 1; i < journal.length; i++) {
      expect(journal[i]!.when, `${journal[i]!.tag} is dated before ${journal[i - 1]!.tag}`).toBeGreaterThan(
        journal[i - 1]!.when,
      );
    }
  });

  it('upgrades a database migrated up to each earlier release, and names a migration drizzle skipped', async () => {
    const empty = await createEmptyDatabase('upgrade');
    cleanups.push(empty.drop);
    const handle = connectPostgres({ url: empty.url, max: 2 });
    cleanups.push(() => handle.close());
    // A release that shipped migrations 0000-0009 only (0010 once came dated before 0009 and was never applied).
    const older = await mkdtemp(path.join(tmpdir(), 'atskills-migrations-'));
    cleanups.push(() => rm(older, { recursive: true, force: true }));
    const journal = JSON.parse(await readFile(path.join(migrationsFolder, 'meta', '_journal.json'), 'utf8'));
    const shipped = journal.entries.slice(0, 10) as { tag: string }[];
    await mkdir(path.join(older, 'meta'));
    for (const entry of shipped) {
      await copyFile(path.join(migrationsFolder, `${entry.tag}.sql`), path.join(older, `${entry.tag}.sql`));
    }
    await writeFile(
      path.join(older, 'meta', '_journal.json'),
      JSON.stringify({ ...journal, entries: shipped }),
    );
    await migrate(handle, older);
    await migrate(handle);
    expect(await migrationsApplied(handle)).toBe(true);
    expect(await rows(handle, sql`select to_regclass('repository_links') is not null as present`)).toEqual([
      { present: true },
    ]);

    // A journal dated out of order: drizzle skips the entry, and migrate says so instead of succeeding.
    const skewed = await mkdtemp(path.join(tmpdir(), 'atskills-migrations-'));
    cleanups.push(() => rm(skewed, { recursive: true, force: true }));
    await mkdir(path.join(skewed, 'meta'));
    const extra = { ...journal.entries.at(-1), idx: journal.entries.length, tag: '9999_late', when: 1 };
    for (const entry of journal.entries as { tag: string }[]) {
      await copyFile(path.join(migrationsFolder, `${entry.tag}.sql`), path.join(skewed, `${entry.tag}.sql`));
    }
    await writeFile(path.join(skewed, '9999_late.sql'), 'create table late_table (id int);');
    await writeFile(
      path.join(skewed, 'meta', '_journal.json'),
      JSON.stringify({ ...journal, entries: [...journal.entries, extra] }),
    );
    await expect(migrate(handle, skewed)).rejects.toThrow(/Migrations 9999_late were not applied/);
    expect(await migrationsApplied(handle, skewed)).toBe(false);
  });
});
