import { mkdtemp, rm } from 'node:fs/promises';
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
});
