/**
 * The in-memory search index stored in Postgres (INDEX_SNAPSHOTS): a build stores it, the next engine over
 * the same database restores it instead of building and answers every judged query (and the pages after
 * them) exactly as the built one, catches up with what changed since, and a snapshot it cannot use costs
 * only a build.
 */
import { modelSnapshotHeader } from '@atskills/db';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JUDGEMENTS } from '../../../bench/relevance/judgements.js';
import type { TestDatabase } from '../../../test/support/database.js';
import { createMemoryEngine, type MemoryEngine, SEARCH_INDEX_SNAPSHOT } from '../src/search/memory-engine.js';
import { createPostgresEngine } from '../src/search/postgres.js';
import { ANONYMOUS_VIEWER } from '../src/services/auth/viewer.js';
import { seedRepository, skillMd } from './support/seed.js';
import { createSnapshotDatabase, snapshotEngines } from './support/snapshots.js';

const QUERIES = [
  ...JUDGEMENTS.map((j) => j.q),
  'ledger reconcile',
  'reconcle ledger',
  'pdf-ext',
  'ledger-rec',
  'cron-au',
  'skill-cre',
  'brainst',
  'systematic-deb',
  'tax forms quarterly',
  'skill',
  'a',
];

describe('the stored search index', () => {
  let db: TestDatabase;
  const { events, engine, lastEvent, closeAll } = snapshotEngines((snapshots, onSnapshot) =>
    createMemoryEngine(db.db, createPostgresEngine(db.db), { maxBytes: 2 ** 30, snapshots, onSnapshot }),
  );
  /** Every query's first page and the page after it, and a page per owner filter. */
  const answers = async (e: MemoryEngine) => {
    const out = [];
    for (const q of QUERIES) {
      // Three a page: a page that has a next one holds its last hit's score in the cursor.
      const first = await e.search(q, {}, ANONYMOUS_VIEWER, 3, undefined);
      const next = first.nextCursor ? await e.search(q, {}, ANONYMOUS_VIEWER, 3, first.nextCursor) : null;
      out.push([first, next]);
    }
    for (const owner of ['anthropics', 'obra', 'acme']) {
      out.push([await e.search('skill', { owner }, ANONYMOUS_VIEWER, 10, undefined), null]);
    }
    return out;
  };

  beforeAll(async () => {
    db = await createSnapshotDatabase('search_snapshot');
  }, 120_000);
  afterAll(async () => {
    await closeAll();
    await db?.drop();
  });

  it('is stored by a build and restored by the next engine, which answers exactly as the built one', async () => {
    const built = engine();
    await built.build();
    expect(lastEvent()).toMatchObject({ kind: 'stored' });
    expect((await modelSnapshotHeader(db.db, SEARCH_INDEX_SNAPSHOT))?.skills).toBeGreaterThan(90);

    const restored = engine();
    await restored.build();
    expect(lastEvent()).toMatchObject({ kind: 'restored' });
    expect(restored.status()).toMatchObject({ ready: true, buildSeconds: null });
    expect(restored.status().restoreSeconds).toBeGreaterThan(0);
    // `loading` counts the skills a build read; a restore reads none.
    const { buildSeconds, restoreSeconds, loading, ...same } = built.status();
    expect(restored.status()).toMatchObject(same);
    const expected = await answers(built);
    expect(expected[0]?.[0]).toMatchObject({ engine: { name: 'memory' } });
    expect(await answers(restored)).toEqual(expected);
    // Stored hits never change (the API caches their JSON by object): restored ones are frozen too.
    const page = await restored.search('pdf', {}, ANONYMOUS_VIEWER, 3, undefined);
    expect(page.hits.length).toBeGreaterThan(0);
    for (const hit of page.hits) expect(Object.isFrozen(hit)).toBe(true);
  });

  it('catches up from the snapshot with what changed since, as a running index does', async () => {
    await db.db.execute(sql`delete from model_snapshots`);
    const running = engine();
    await running.build();
    expect(lastEvent()).toMatchObject({ kind: 'stored' });
    await seedRepository(db.db, 'acme', 'finance', {
      'ledger-reconcile/SKILL.md': skillMd(
        'ledger-reconcile',
        'Reconcile the quarterly ledger against bank statements',
      ),
      'pdf-extract/SKILL.md': skillMd('pdf-extract', 'Extract tables and text from PDF files'),
      'tax-forms/SKILL.md': skillMd('tax-forms', 'Fill in quarterly tax forms from the ledger'),
    });
    await running.sync();
    const restored = engine();
    await restored.build();
    expect(lastEvent()).toMatchObject({ kind: 'restored' });
    const after = await answers(restored);
    expect(after).toEqual(await answers(running));
    const taxes = await restored.search('tax forms quarterly', {}, ANONYMOUS_VIEWER, 5, undefined);
    expect(taxes.hits[0]?.identity).toBe('gh:acme/finance/tax-forms');
    const cron = await restored.search('cron-audit', {}, ANONYMOUS_VIEWER, 5, undefined);
    expect(cron.hits.map((h) => h.identity)).not.toContain('gh:acme/finance/cron-audit');
  });

  it('is not used when other code wrote it, and the build stores one of this code', async () => {
    await db.db.execute(
      sql`update model_snapshots set format = 'another-format' where name = 'search-index'`,
    );
    const e = engine();
    await e.build();
    expect(events.slice(-2)).toMatchObject([
      { kind: 'unusable', reason: expect.stringContaining('written by other code (another-format') },
      { kind: 'stored' },
    ]);
    expect(e.status()).toMatchObject({ ready: true, restoreSeconds: null });
  });

  it('is not used once older than the change feed records (the tombstones of seven days)', async () => {
    await db.db.execute(
      sql`update model_snapshots set created_at = now() - interval '7 days' where name = 'search-index'`,
    );
    const e = engine();
    await e.build();
    expect(events.slice(-2)).toMatchObject([
      { kind: 'unusable', reason: expect.stringMatching(/^stored 7\.0 days ago/) },
      { kind: 'stored' },
    ]);
  });

  it('is neither stored nor read with INDEX_SNAPSHOTS off', async () => {
    await db.db.execute(sql`delete from model_snapshots`);
    const count = events.length;
    const e = engine(false);
    await e.build();
    expect(events.length).toBe(count);
    expect(await modelSnapshotHeader(db.db, SEARCH_INDEX_SNAPSHOT)).toBeNull();
  });
});
