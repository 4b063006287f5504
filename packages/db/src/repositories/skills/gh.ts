import { and, asc, eq, inArray, isNull, notInArray, sql } from 'drizzle-orm';
import type { Executor } from '../../client.js';
import { skillRevisions, skills } from '../../schema/skills.js';
import { chunks } from '../batches.js';
import { type SkillRevisionContent, skillContentColumns, skillContentFromExcluded } from './content.js';

// Table family `skills` and `skill_revisions`, crawled side: the `gh:` skill rows of one repository, as a
// repository job, a move or a disappearance of the repository writes them.

/** A skill seen in this crawl: with content when its revision is new, without when it is unchanged. */
export interface SeenSkill {
  identity: string;
  path: string;
  revision: string;
  commit: string;
  content?: SkillRevisionContent;
}

/** What every skill row a repository job writes takes from its repository. */
export interface CrawledSkillTarget {
  repositoryId: number;
  owner: string;
  /** The repository's name. */
  container: string;
  stars: number;
  at: Date;
}

/** Stored revision and gone mark of each skill of a repository, by path (decides what to download). */
export async function storedSkillRevisions(
  db: Executor,
  repositoryId: number,
): Promise<Map<string, { revision: string; gone: boolean; parseError: boolean }>> {
  const rows = await db
    .select({
      path: skills.path,
      revision: skills.revision,
      goneAt: skills.goneAt,
      parseError: skills.parseError,
    })
    .from(skills)
    .where(eq(skills.repositoryId, repositoryId));
  return new Map(
    rows.map((r) => [r.path, { revision: r.revision, gone: r.goneAt !== null, parseError: !!r.parseError }]),
  );
}

/** Every skill row of a repository before a job writes (what it counts as added, updated or back). */
export async function repositorySkillStates(
  tx: Executor,
  repositoryId: number,
): Promise<{ id: number; identity: string; revision: string; goneAt: Date | null }[]> {
  return tx
    .select({
      id: skills.id,
      identity: skills.identity,
      revision: skills.revision,
      goneAt: skills.goneAt,
    })
    .from(skills)
    .where(eq(skills.repositoryId, repositoryId));
}

/** How many live (not gone) skills a repository holds. */
export async function countLiveRepositorySkills(db: Executor, repositoryId: number): Promise<number> {
  const [count] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(skills)
    .where(and(eq(skills.repositoryId, repositoryId), isNull(skills.goneAt)));
  return count?.n ?? 0;
}

/** How many skill rows a repository holds, gone ones included (an empty shell holds none). */
export async function countRepositorySkills(tx: Executor, repositoryId: number): Promise<number> {
  const [held] = await tx
    .select({ n: sql<number>`count(*)::int` })
    .from(skills)
    .where(eq(skills.repositoryId, repositoryId));
  return held?.n ?? 0;
}

/** Identities of a repository's listed skills (live and parsed), sorted. */
export async function listedRepositorySkillIdentities(db: Executor, repositoryId: number): Promise<string[]> {
  const listed = await db
    .select({ identity: skills.identity })
    .from(skills)
    .where(and(eq(skills.repositoryId, repositoryId), isNull(skills.goneAt), isNull(skills.parseError)))
    .orderBy(asc(skills.identity));
  return listed.map((s) => s.identity);
}

/**
 * Upserts the skills whose revision is new (by identity: a skill moving between repositories follows its
 * identity) and records each new revision for `?rev=`, a chunk per statement; the revisions need the ids
 * the upsert returns, so they follow it chunk by chunk.
 */
export async function upsertCrawledSkills(
  tx: Executor,
  target: CrawledSkillTarget,
  changed: SeenSkill[],
): Promise<void> {
  for (const batch of chunks(changed)) {
    const rows = batch.map((s) => {
      const c = s.content!;
      return {
        identity: s.identity,
        source: 'gh',
        repositoryId: target.repositoryId,
        owner: target.owner,
        container: target.container,
        path: s.path,
        ...skillContentColumns(c),
        revision: s.revision,
        commit: s.commit,
        stars: target.stars,
        visibility: 'public',
        firstSeenAt: target.at,
        lastSeenAt: target.at,
        updatedAt: target.at,
        goneAt: null,
      };
    });
    const upserted = await tx
      .insert(skills)
      .values(rows)
      .onConflictDoUpdate({
        target: skills.identity,
        set: {
          ...skillContentFromExcluded(),
          repositoryId: sql`excluded.repository_id`,
          parseError: sql`excluded.parse_error`,
          stars: sql`excluded.stars`,
        },
      })
      .returning({ id: skills.id, identity: skills.identity });
    const idByIdentity = new Map(upserted.map((r) => [r.identity, r.id]));
    const revisionRows = batch.map((s) => ({
      skillId: idByIdentity.get(s.identity)!,
      revision: s.revision,
      name: s.content!.name,
      description: s.content!.description,
      frontmatter: s.content!.frontmatter,
      body: s.content!.body,
      files: s.content!.files,
      commit: s.commit,
    }));
    await tx.insert(skillRevisions).values(revisionRows).onConflictDoNothing();
  }
}

/** Unchanged skills are still there: seen now, with the repository's stars; one that comes back clears its gone mark. */
export async function touchUnchangedSkills(
  tx: Executor,
  target: CrawledSkillTarget,
  identities: string[],
): Promise<void> {
  for (const batch of chunks(identities)) {
    await tx
      .update(skills)
      .set({ lastSeenAt: target.at, goneAt: null, stars: target.stars })
      .where(and(eq(skills.repositoryId, target.repositoryId), inArray(skills.identity, batch)));
  }
}

/**
 * Marks gone the live skills of a repository not in `keep` (all of them when `keep` is empty): they leave
 * search, their rows stay so their identities answer 410. Returns their identities.
 */
export async function markRepositorySkillsGone(
  tx: Executor,
  repositoryId: number,
  keep: readonly string[],
  at: Date,
): Promise<string[]> {
  const gone = await tx
    .update(skills)
    .set({ goneAt: at, updatedAt: at })
    .where(
      and(
        eq(skills.repositoryId, repositoryId),
        isNull(skills.goneAt),
        keep.length > 0 ? notInArray(skills.identity, [...keep]) : undefined,
      ),
    )
    .returning({ identity: skills.identity });
  return gone.map((g) => g.identity);
}

/** Gives every skill of a repository its stars (new metadata without a new tree still moves its ranking). */
export async function setRepositorySkillStars(
  tx: Executor,
  repositoryId: number,
  stars: number,
): Promise<void> {
  await tx.update(skills).set({ stars }).where(eq(skills.repositoryId, repositoryId));
}

/**
 * Gives a moved repository's skills their new identities (prefix `from` becomes `to.prefix`), owner and
 * container; their revisions hang off the skill ids and follow. Returns each skill's old and new identity.
 */
export async function renameRepositorySkills(
  tx: Executor,
  repositoryId: number,
  oldPrefix: string,
  to: { prefix: string; owner: string; name: string },
): Promise<{ from: string; to: string }[]> {
  const before = await tx
    .select({ id: skills.id, identity: skills.identity })
    .from(skills)
    .where(eq(skills.repositoryId, repositoryId));
  const moved = await tx
    .update(skills)
    .set({
      identity: sql`${to.prefix} || substr(${skills.identity}, ${oldPrefix.length + 1})`,
      owner: to.owner,
      container: to.name,
      updatedAt: new Date(),
    })
    .where(eq(skills.repositoryId, repositoryId))
    .returning({ id: skills.id, identity: skills.identity });
  const fromById = new Map(before.map((b) => [b.id, b.identity]));
  return moved.map((m) => ({ from: fromById.get(m.id) ?? '', to: m.identity }));
}
