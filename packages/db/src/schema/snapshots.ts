import { bigint, integer, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { bytea } from './columns.js';

/**
 * A persisted in-memory structure of the API (the suggestion model), by name: what format and code wrote
 * it, the change mark its content is current to (a catch-up from there brings it up to date), and how many
 * parts it was written in. Stored with the index it was built from, so a restarted API (or another replica)
 * loads it in seconds instead of building it from every skill's text.
 */
export const modelSnapshots = pgTable('model_snapshots', {
  name: text('name').primaryKey(),
  format: text('format').notNull(),
  mark: text('mark').notNull(),
  skills: integer('skills').notNull(),
  bytes: bigint('bytes', { mode: 'number' }).notNull(),
  parts: integer('parts').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/** The parts of a snapshot, in order (compressed already: stored without Postgres's own compression). */
export const modelSnapshotParts = pgTable(
  'model_snapshot_parts',
  {
    name: text('name')
      .notNull()
      .references(() => modelSnapshots.name, { onDelete: 'cascade' }),
    part: integer('part').notNull(),
    content: bytea('content').notNull(),
  },
  (t) => [primaryKey({ columns: [t.name, t.part] })],
);
