import type { SafetyFinding } from '@atskills/protocol';
import { eq, or } from 'drizzle-orm';
import type { Executor } from '../../client.js';
import { type SkillFile, skills } from '../../schema/skills.js';

// The `flags` column of skill rows as the safety reports rewrite it (a disputed or confirmed verdict
// applies to every current row with the judged content).

/** The flags of every skill row currently at `revision`. */
export async function skillFlagsAtRevision(
  tx: Executor,
  revision: string,
): Promise<{ id: number; flags: SafetyFinding[] }[]> {
  return tx.select({ id: skills.id, flags: skills.flags }).from(skills).where(eq(skills.revision, revision));
}

/** The flags, revision and files of the skill rows at `revision` or of `identity` (candidates for a verdict). */
export async function skillFlagsAtRevisionOrIdentity(
  tx: Executor,
  revision: string,
  identity: string,
): Promise<{ id: number; flags: SafetyFinding[]; revision: string; files: SkillFile[] }[]> {
  return tx
    .select({ id: skills.id, flags: skills.flags, revision: skills.revision, files: skills.files })
    .from(skills)
    .where(or(eq(skills.revision, revision), eq(skills.identity, identity)));
}

/** Replaces one skill row's flags (the change feed then drops the API's read caches of it). */
export async function setSkillFlags(tx: Executor, id: number, flags: SafetyFinding[]): Promise<void> {
  await tx.update(skills).set({ flags }).where(eq(skills.id, id));
}
