import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  index,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import { namespaces, users } from './teams.js';

/**
 * An invitation to join a team: membership takes the invitee's consent (SPEC 2.3), so a team owner's
 * "add member" creates one of these, and only the invitee's acceptance makes the membership.
 */
export const teamInvitations = pgTable(
  'team_invitations',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    namespaceId: bigint('namespace_id', { mode: 'number' })
      .notNull()
      .references(() => namespaces.id, { onDelete: 'cascade' }),
    userId: bigint('user_id', { mode: 'number' })
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    role: text('role').notNull(),
    invitedBy: bigint('invited_by', { mode: 'number' }).references(() => users.id, { onDelete: 'set null' }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    decidedAt: timestamp('decided_at', { withTimezone: true }),
    /** pending | accepted | declined | withdrawn */
    status: text('status').notNull().default('pending'),
  },
  (t) => [
    uniqueIndex('team_invitations_pending_key')
      .on(t.namespaceId, t.userId)
      .where(sql`${t.status} = 'pending'`),
    index('team_invitations_user_idx').on(t.userId),
  ],
);

/** A report about a skill: a dispute of one safety flag, or a report that the skill is malicious. */
export const skillReports = pgTable(
  'skill_reports',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    identity: text('identity').notNull(),
    /** The revision the report is about (flags are keyed by revision). */
    revision: text('revision').notNull(),
    /** dispute | malicious */
    kind: text('kind').notNull(),
    /** The disputed rule (disputes only). */
    rule: text('rule'),
    /** The skill's content hash at that revision (what an accepted dispute suppresses the rule for). */
    contentHash: text('content_hash'),
    reporterUserId: bigint('reporter_user_id', { mode: 'number' }).references(() => users.id, {
      onDelete: 'set null',
    }),
    note: text('note').notNull().default(''),
    /** open | accepted | rejected */
    status: text('status').notNull().default('open'),
    decidedBy: bigint('decided_by', { mode: 'number' }).references(() => users.id, { onDelete: 'set null' }),
    decisionNote: text('decision_note'),
    decidedAt: timestamp('decided_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('skill_reports_status_idx').on(t.status, t.id)],
);

/** A safety rule turned off for one content hash by an accepted dispute. */
export const flagSuppressions = pgTable(
  'flag_suppressions',
  {
    contentHash: text('content_hash').notNull(),
    rule: text('rule').notNull(),
    reportId: bigint('report_id', { mode: 'number' }).references(() => skillReports.id, {
      onDelete: 'set null',
    }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ name: 'flag_suppressions_pkey', columns: [t.contentHash, t.rule] })],
);
