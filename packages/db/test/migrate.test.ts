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

  it('upgrades a database that drizzle left without a migration shipped dated out of order', async () => {
    const empty = await createEmptyDatabase('upgrade');
    cleanups.push(empty.drop);
    const handle = connectPostgres({ url: empty.url, max: 2 });
    cleanups.push(() => handle.close());
    const journal = JSON.parse(await readFile(path.join(migrationsFolder, 'meta', '_journal.json'), 'utf8'));
    type Entry = { tag: string; when: number };
    /** A migrations folder holding `entries` (the repository's SQL files) as a release shipped them. */
    const release = async (entries: Entry[]) => {
      const folder = await mkdtemp(path.join(tmpdir(), 'atskills-migrations-'));
      cleanups.push(() => rm(folder, { recursive: true, force: true }));
      await mkdir(path.join(folder, 'meta'));
      for (const entry of entries) {
        const file = path.join(migrationsFolder, `${entry.tag}.sql`);
        await copyFile(file, path.join(folder, `${entry.tag}.sql`)).catch(() => undefined);
      }
      await writeFile(path.join(folder, 'meta', '_journal.json'), JSON.stringify({ ...journal, entries }));
      return folder;
    };
    const entries = journal.entries as Entry[];
    // A release with 0000-0009, then one with 0010 dated before 0009 (as it shipped) and 0011: drizzle
    // applies 0011 and skips 0010 for good; migrate applies it.
    await migrate(handle, await release(entries.slice(0, 10)));
    const shipped = entries
      .slice(0, 12)
      .map((e) => (e.tag.startsWith('0010_') ? { ...e, when: 1796128200000 } : e));
    await migrate(handle, await release(shipped));
    const present = sql`select to_regclass('repository_links') is not null as present`;
    expect(await rows(handle, present)).toEqual([{ present: true }]);
    await migrate(handle);
    expect(await migrationsApplied(handle)).toBe(true);

    // Any entry dated before the last applied one is applied too, once, in journal order.
    const late = await release([...entries, { ...entries.at(-1)!, tag: '9999_late', when: 1 }]);
    await writeFile(path.join(late, '9999_late.sql'), 'create table late_table (id int);');
    expect(await migrationsApplied(handle, late)).toBe(false);
    await migrate(handle, late);
    await migrate(handle, late);
    expect(await migrationsApplied(handle, late)).toBe(true);
    expect(await rows(handle, sql`select to_regclass('late_table') is not null as present`)).toEqual([
      { present: true },
    ]);
  });
});
