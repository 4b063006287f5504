import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.js';
import type { SnapshotEvent } from '../../src/runtime/snapshots.js';
import { seedCorpus, seedRepository, skillMd } from './seed.js';

// What the suites of the stored structures (the search index, the suggestion model) share: the database
// they store to, and their engines with the snapshot events those report.

/** The small finance repository seeded beside the corpus; a test changes its ledger skill's description. */
export const financeSkills = (ledgerDescription: string) => ({
  'ledger-reconcile/SKILL.md': skillMd('ledger-reconcile', ledgerDescription),
  'pdf-extract/SKILL.md': skillMd('pdf-extract', 'Extract tables and text from PDF files'),
  'cron-audit/SKILL.md': skillMd('cron-audit', 'Audit scheduled cron jobs for overlaps and drift'),
});

/** A test database holding four corpus repositories and acme/finance (financeSkills, before any change). */
export async function createSnapshotDatabase(label: string): Promise<TestDatabase> {
  const db = await createTestDatabase(label);
  await seedCorpus(db.db, ['anthropics/skills', 'obra/superpowers', 'getsentry/skills', 'mattpocock/skills']);
  await seedRepository(
    db.db,
    'acme',
    'finance',
    financeSkills('Match invoices to payments in a spreadsheet'),
  );
  return db;
}

/**
 * Engines of one kind made by `make`, with every snapshot event they report in `events`: `engine` makes one
 * (snapshots on unless told), `track` adds one made otherwise, `closeAll` closes them all.
 */
export function snapshotEngines<E extends { close(): Promise<void> }>(
  make: (snapshots: boolean, onSnapshot: (event: SnapshotEvent) => void) => E,
) {
  const events: SnapshotEvent[] = [];
  const engines: E[] = [];
  const onSnapshot = (event: SnapshotEvent) => events.push(event);
  const track = (engine: E) => {
    engines.push(engine);
    return engine;
  };
  return {
    events,
    onSnapshot,
    track,
    engine: (snapshots = true) => track(make(snapshots, onSnapshot)),
    lastEvent: () => events[events.length - 1],
    async closeAll() {
      for (const engine of engines) await engine.close();
    },
  };
}
