import { integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { bytea } from './columns.js';

/** File contents, content-addressed by sha256 and stored once however many skills share them. */
export const blobs = pgTable('blobs', {
  sha256: text('sha256').primaryKey(),
  size: integer('size').notNull(),
  content: bytea('content').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/** Safety-scan verdicts keyed by the content hash of a skill folder, so identical copies share them. */
export const safetyVerdicts = pgTable('safety_verdicts', {
  contentSha256: text('content_sha256').primaryKey(),
  scannerVersion: text('scanner_version').notNull(),
  flags: jsonb('flags').$type<unknown[]>().notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});
