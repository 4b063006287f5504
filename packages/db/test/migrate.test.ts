import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { createEmptyDatabase } from '../../../test/support/database.js';
import { connectEmbedded, connectPostgres, migrate, migrationsApplied, skills } from '../src/index.js';

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
    expect(await migrationsApplied(handle)).toBe(false);
    await migrate(handle);
    await migrate(handle);
    expect(await migrationsApplied(handle)).toBe(true);
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
    const hit = await handle.db.execute(
      sql`select identity from skills where search @@ websearch_to_tsquery('english', 'merging forms')`,
    );
    expect((hit as unknown as { rows: unknown[] }).rows).toHaveLength(1);
    const typo = await handle.db.execute(sql`select identity from skills where name % 'pdf-froms'`);
    expect((typo as unknown as { rows: unknown[] }).rows).toHaveLength(1);
  });

  it('migrate an embedded PGlite database with the same migrations and search', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'atskills-pglite-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const handle = await connectEmbedded(dir);
    cleanups.push(() => handle.close());
    await migrate(handle);
    expect(await migrationsApplied(handle)).toBe(true);
    await handle.db.insert(skills).values({
      identity: 'gh:o/r/pdf',
      source: 'gh',
      owner: 'o',
      container: 'r',
      path: 'pdf',
      name: 'pdf',
      description: 'Fill and merge PDF forms.',
      revision: 'abc',
    });
    const hit = await handle.db.execute(
      sql`select identity from skills where search @@ websearch_to_tsquery('english', 'merge')`,
    );
    expect((hit as unknown as { rows: unknown[] }).rows).toHaveLength(1);
  });
});
