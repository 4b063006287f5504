/**
 * The suggestion model stored in Postgres (INDEX_SNAPSHOTS): a build stores it, the next engine over the
 * same database restores it instead of building and answers exactly as the built one did, catches up with
 * what changed since, and a snapshot it cannot use (other code, a mark the database cannot catch up from,
 * damaged bytes) costs only a build.
 */
import { modelSnapshotHeader } from '@atskills/db';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '../../../test/support/database.js';
import { createPostgresEngine } from '../src/search/postgres.js';
import { ANONYMOUS_VIEWER } from '../src/services/auth/viewer.js';
import { createSuggestEngine, type SuggestEngine } from '../src/suggest/engine.js';
import { SUGGESTION_SNAPSHOT } from '../src/suggest/snapshot.js';
import { seedRepository, skillMd } from './support/seed.js';
import { createSnapshotDatabase, financeSkills, snapshotEngines } from './support/snapshots.js';

const MESSAGES = [
  'Generate a changelog from the git commits since v1.4 for the release notes',
  "I'm stuck in a rebase with merge conflicts in three files, help me resolve them",
  'Build an MCP server that exposes our internal ticket API',
  'the tests pass locally but fail in CI, find out why',
  'write a design doc for the new billing service and review it with the team',
  'reconcile the quarterly ledger against the bank statements',
  'thanks, that worked!',
];

describe('the stored suggestion model', () => {
  let db: TestDatabase;
  const { events, onSnapshot, track, engine, lastEvent, closeAll } = snapshotEngines(
    (snapshots, onSnapshot) =>
      createSuggestEngine(db.db, createPostgresEngine(db.db), {
        maxBytes: 2 ** 28,
        snapshots,
        explain: true,
        onSnapshot,
      }),
  );
  /** Every message's answer with its candidates' evidence: two models that answer these alike are alike. */
  const answers = (e: SuggestEngine) => Promise.all(MESSAGES.map((m) => e.suggest(m, ANONYMOUS_VIEWER, 5)));

  beforeAll(async () => {
    db = await createSnapshotDatabase('suggest_snapshot');
  }, 120_000);
  afterAll(async () => {
    await closeAll();
    await db?.drop();
  });

  it('is stored by a build and restored by the next engine, which answers exactly as the built one', async () => {
    const built = engine();
    await built.build();
    expect(lastEvent()).toMatchObject({ kind: 'stored' });
    const header = await modelSnapshotHeader(db.db, SUGGESTION_SNAPSHOT);
    expect(header?.skills).toBe(built.status().documents);
    expect(header?.bytes).toBeGreaterThan(0);

    const restored = engine();
    await restored.build();
    expect(lastEvent()).toMatchObject({ kind: 'restored', skills: built.status().documents });
    expect(restored.status()).toMatchObject({ ready: true, buildSeconds: null });
    expect(restored.status().restoreSeconds).toBeGreaterThan(0);
    const { buildSeconds, restoreSeconds, bytes, ...same } = built.status();
    expect(restored.status()).toMatchObject(same);
    expect(await answers(restored)).toEqual(await answers(built));
  });

  it('catches up from the snapshot with what changed since, as a running model does', async () => {
    // A model built (not restored) keeps running beside the restored one.
    await db.db.execute(sql`delete from model_snapshots`);
    const running = engine();
    await running.build();
    expect(lastEvent()).toMatchObject({ kind: 'stored' });
    // After the snapshot: one skill's text changes, one leaves, one arrives.
    const { 'cron-audit/SKILL.md': _gone, ...kept } = financeSkills(
      'Reconcile the quarterly ledger against bank statements and flag mismatches',
    );
    await seedRepository(db.db, 'acme', 'finance', {
      ...kept,
      'tax-forms/SKILL.md': skillMd('tax-forms', 'Fill in quarterly tax forms from the ledger'),
    });
    await running.sync();
    const restored = engine();
    await restored.build();
    expect(lastEvent()).toMatchObject({ kind: 'restored' });
    const after = await answers(restored);
    expect(after).toEqual(await answers(running));
    const ledger = after[5]!;
    expect(ledger.results[0]?.hit.identity).toBe('gh:acme/finance/ledger-reconcile');
    const held = await restored.suggest('audit scheduled cron jobs for drift', ANONYMOUS_VIEWER, 5);
    expect(held.results.map((r) => r.hit.identity)).not.toContain('gh:acme/finance/cron-audit');
  });

  it('is stored again once it is old and the model took changes, not while nothing changed', async () => {
    // A transaction left open holds the change mark back (it is the oldest running anywhere on the server,
    // as another database's can be), so every catch-up sees the rows written since it began again.
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select pg_current_xact_id()');
      await seedRepository(db.db, 'acme', 'payroll', {
        'payslips/SKILL.md': skillMd('payslips', 'Generate monthly payslips from the payroll sheet'),
      });
      const e = track(
        createSuggestEngine(db.db, createPostgresEngine(db.db), {
          maxBytes: 2 ** 28,
          snapshots: true,
          snapshotEveryMs: 0,
          onSnapshot,
        }),
      );
      const before = events.length;
      await e.build();
      // The catch-up after the restore took the new skill: stored again at once.
      expect(events.slice(before)).toMatchObject([{ kind: 'restored' }, { kind: 'stored' }]);
      const count = events.length;
      // The same rows again, nothing to take: not stored.
      await e.sync();
      await e.sync();
      expect(events.length).toBe(count);
      await seedRepository(db.db, 'acme', 'payroll', {
        'payslips/SKILL.md': skillMd('payslips', 'Generate monthly payslips and tax forms'),
      });
      await e.sync();
      expect(events.slice(count)).toMatchObject([{ kind: 'stored' }]);
      expect((await modelSnapshotHeader(db.db, SUGGESTION_SNAPSHOT))?.skills).toBe(e.status().documents);
    } finally {
      await holder.query('rollback');
      await holder.end();
    }
  });

  it('is not used when other code wrote it, and the build stores one of this code', async () => {
    await db.db.execute(sql`update model_snapshots set format = 'another-format'`);
    const e = engine();
    await e.build();
    expect(events.slice(-2)).toMatchObject([
      { kind: 'unusable', reason: expect.stringContaining('written by other code (another-format') },
      { kind: 'stored' },
    ]);
    expect((await modelSnapshotHeader(db.db, SUGGESTION_SNAPSHOT))?.format).not.toBe('another-format');
  });

  it('is not used when its change mark is ahead of the database (restored elsewhere)', async () => {
    await db.db.execute(sql`update model_snapshots set mark = (mark::bigint + 1000000)::text`);
    const e = engine();
    await e.build();
    expect(events.slice(-2)).toMatchObject([
      { kind: 'unusable', reason: expect.stringContaining('cannot be caught up from') },
      { kind: 'stored' },
    ]);
    expect(await e.suggest(MESSAGES[0]!, ANONYMOUS_VIEWER, 5)).toMatchObject({ abstained: false });
  });

  it('costs only a build when its bytes are damaged', async () => {
    await db.db.execute(sql`update model_snapshot_parts set content = '\\x00010203'::bytea where part = 0`);
    const e = engine();
    await e.build();
    expect(events.slice(-2)).toMatchObject([{ kind: 'unusable' }, { kind: 'stored' }]);
    expect(e.status()).toMatchObject({ ready: true, restoreSeconds: null });
    expect(await e.suggest(MESSAGES[0]!, ANONYMOUS_VIEWER, 5)).toMatchObject({ abstained: false });
  });

  it('is not restored over a memory budget lowered since, and the build refuses with the budget', async () => {
    const small = track(
      createSuggestEngine(db.db, createPostgresEngine(db.db), {
        maxBytes: 100_000,
        snapshots: true,
        onSnapshot,
      }),
    );
    await small.build();
    expect(lastEvent()).toMatchObject({ kind: 'unusable', reason: 'it would exceed the memory budget' });
    expect(small.status()).toMatchObject({
      ready: false,
      error: expect.stringContaining('would exceed its memory budget'),
    });
  });

  it('is neither stored nor read with INDEX_SNAPSHOTS off', async () => {
    await db.db.execute(sql`delete from model_snapshots`);
    const count = events.length;
    const e = engine(false);
    await e.build();
    expect(events.length).toBe(count);
    expect(await modelSnapshotHeader(db.db, SUGGESTION_SNAPSHOT)).toBeNull();
  });
});
