import { and, inArray, lt, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { skills } from '../schema/skills.js';
import { skillUseClients, skillUseMarks, skillUses } from '../schema/uses.js';

// Table family `skill_uses`, `skill_use_marks` and `skill_use_clients` (src/schema/uses.ts): distinct
// clients per skill per day, and the day's counting set when there is no Redis.

/** Weekly (the last 7 days, today included) and all-time uses of a skill. */
export interface SkillUses {
  week: number;
  total: number;
}

/** Stores the day's distinct-client counts of skills (a Redis roll-up: the count replaces the stored one). */
export async function storeDailyUses(
  db: Database,
  day: string,
  counts: Array<{ skillId: number; uses: number }>,
): Promise<void> {
  if (counts.length === 0) return;
  await db
    .insert(skillUses)
    .values(counts.map((c) => ({ skillId: c.skillId, day, uses: c.uses })))
    .onConflictDoUpdate({
      target: [skillUses.skillId, skillUses.day],
      set: { uses: sql`greatest(${skillUses.uses}, excluded.uses)` },
    });
}

/**
 * Adds one day's marks (salted client, skill) without Redis, in one statement: a client's first mark of a
 * skill today counts once, and only while the client has added to fewer than `capPerClient` skills today.
 * Past days' marks and client tallies are deleted in the same transaction.
 */
export async function recordUseMarks(
  db: Database,
  day: string,
  marks: Array<{ skillId: number; clientHash: string }>,
  capPerClient: number,
): Promise<void> {
  if (marks.length === 0) return;
  await db.transaction(async (tx) => {
    await tx.delete(skillUseMarks).where(lt(skillUseMarks.day, day));
    await tx.delete(skillUseClients).where(lt(skillUseClients.day, day));
    // Marks are few per batch; per-client order keeps the cap exact (a loop within the batch stays one mark).
    for (const mark of marks) {
      const [tally] = await tx
        .select({ skills: skillUseClients.skills })
        .from(skillUseClients)
        .where(
          and(sql`${skillUseClients.day} = ${day}`, sql`${skillUseClients.clientHash} = ${mark.clientHash}`),
        )
        .for('update');
      if (tally && tally.skills >= capPerClient) continue;
      const inserted = await tx
        .insert(skillUseMarks)
        .values({ day, skillId: mark.skillId, clientHash: mark.clientHash })
        .onConflictDoNothing()
        .returning({ skillId: skillUseMarks.skillId });
      if (inserted.length === 0) continue;
      await tx
        .insert(skillUseClients)
        .values({ day, clientHash: mark.clientHash, skills: 1 })
        .onConflictDoUpdate({
          target: [skillUseClients.day, skillUseClients.clientHash],
          set: { skills: sql`${skillUseClients.skills} + 1` },
        });
      await tx
        .insert(skillUses)
        .values({ skillId: mark.skillId, day, uses: 1 })
        .onConflictDoUpdate({
          target: [skillUses.skillId, skillUses.day],
          set: { uses: sql`${skillUses.uses} + 1` },
        });
    }
  });
}

/** Weekly and all-time uses by canonical identity (one query through the skills' ids). */
export async function usesOfIdentities(
  db: Database,
  identities: string[],
  today: string,
): Promise<Map<string, SkillUses>> {
  if (identities.length === 0) return new Map();
  const rows = await db
    .select({
      identity: skills.identity,
      week: sql<number>`coalesce(sum(${skillUses.uses}) filter (where ${skillUses.day} > ${today}::date - 7), 0)::int`,
      total: sql<number>`sum(${skillUses.uses})::int`,
    })
    .from(skillUses)
    .innerJoin(skills, sql`${skills.id} = ${skillUses.skillId}`)
    .where(inArray(skills.identity, identities))
    .groupBy(skills.identity);
  return new Map(rows.map((r) => [r.identity, { week: r.week, total: r.total }]));
}
