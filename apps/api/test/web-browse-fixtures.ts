// The browse pages' data, shared by their inject and Chromium tests: the web fixtures, a recorded GitHub
// repository, a team whose collection went from private to public (two revisions of one skill) plus a
// collection that stays private, known dates for the "recent" lists, and uses for "most used".
import { type Database, repositories, storeDailyUses } from '@atskills/db';
import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { packCollection, skillMd } from '../../../test/fixtures/archives/make.js';
import { queryRows } from '../../../test/support/database.js';
import { dayOf } from '../src/services/uses.js';
import { auth, publish, seedTeam, type Tokens } from './teams-fixtures.js';
import { insertSkills, webFixtures } from './web-fixtures.js';

const GUIDES_V1 = {
  'a/SKILL.md': skillMd('a', 'Guide a, first draft'),
  'more/b/SKILL.md': skillMd('b', 'Guide b'),
  'more/c/SKILL.md': skillMd('c', 'Guide c'),
};
const GUIDES_V2 = { ...GUIDES_V1, 'a/SKILL.md': skillMd('a', 'Guide a, rewritten') };

/** Seeds the browse data through the real publish route; returns the team `pubteam`'s tokens. */
export async function seedBrowseFixtures(app: FastifyInstance, db: Database): Promise<Tokens> {
  await insertSkills(db, webFixtures());
  // The crawler records each repository with the spelling GitHub gives; lookups in another case go through it.
  await db.insert(repositories).values({ owner: 'acme', name: 'tools', stars: 120 });
  const tokens = await seedTeam(db, 'pubteam');
  // The guides: first published privately, then public with `a` rewritten (two revisions of `a`).
  for (const [files, visibility] of [
    [GUIDES_V1, 'private'],
    [GUIDES_V2, 'public'],
  ] as const) {
    const res = await publish(
      app,
      'pubteam/guides',
      packCollection(files),
      auth(tokens, 'publisher'),
      visibility,
    );
    expect(res.statusCode, res.body).toBeLessThan(300);
  }
  const hidden = await publish(
    app,
    'pubteam/hidden',
    packCollection({ 'x/SKILL.md': skillMd('x', 'Team only notes') }),
    auth(tokens, 'publisher'),
    'private',
  );
  expect(hidden.statusCode, hidden.body).toBeLessThan(300);
  // Dates the lists can be checked against: everything old, then one fresh skill and one fresh update.
  await db.execute(
    sql`update skills set first_seen_at = '2026-01-01T00:00:00Z', updated_at = '2026-01-02T00:00:00Z'`,
  );
  await db.execute(
    sql`update skills set first_seen_at = '2026-11-30T10:00:00Z' where identity = 'gh:mallory/traps/pwn-check'`,
  );
  await db.execute(
    sql`update skills set updated_at = '2026-11-30T11:00:00Z' where identity = 'gh:acme/tools/skills/rollback'`,
  );
  // Private skills with many uses must still stay out of "most used".
  const ids = await queryRows<{ id: number; identity: string }>(
    db,
    sql`select id, identity from skills where identity in ('gh:acme/tools/skills/deploy-runbook', 'hub:pubteam/hidden/x', 'hub:secretco/ops/deploy-secret')`,
  );
  const today = dayOf(new Date());
  await storeDailyUses(
    db,
    today,
    ids.map((r) => ({ skillId: Number(r.id), uses: r.identity.startsWith('gh:') ? 7 : 500 })),
  );
  return tokens;
}
