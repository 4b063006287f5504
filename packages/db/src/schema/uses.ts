import { bigint, date, index, integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { skills } from './skills.js';

/** Distinct clients that resolved a skill on a day (UTC): the only lasting record of uses. */
export const skillUses = pgTable(
  'skill_uses',
  {
    skillId: bigint('skill_id', { mode: 'number' })
      .notNull()
      .references(() => skills.id, { onDelete: 'cascade' }),
    day: date('day', { mode: 'string' }).notNull(),
    uses: integer('uses').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.skillId, t.day], name: 'skill_uses_pkey' }),
    index('skill_uses_day_idx').on(t.day),
  ],
);

/** Today's salted client hashes per skill (the counting set when there is no Redis); past days are deleted. */
export const skillUseMarks = pgTable(
  'skill_use_marks',
  {
    day: date('day', { mode: 'string' }).notNull(),
    skillId: bigint('skill_id', { mode: 'number' }).notNull(),
    clientHash: text('client_hash').notNull(),
  },
  (t) => [primaryKey({ columns: [t.day, t.skillId, t.clientHash], name: 'skill_use_marks_pkey' })],
);

/** How many skills a salted client added a use to today (the per-client cap without Redis). */
export const skillUseClients = pgTable(
  'skill_use_clients',
  {
    day: date('day', { mode: 'string' }).notNull(),
    clientHash: text('client_hash').notNull(),
    skills: integer('skills').notNull(),
  },
  (t) => [primaryKey({ columns: [t.day, t.clientHash], name: 'skill_use_clients_pkey' })],
);
