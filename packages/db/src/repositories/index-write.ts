import type { SafetyFinding } from '@atskills/protocol';
import { and, eq, inArray, isNull, notInArray, sql } from 'drizzle-orm';
import type { Database, Executor } from '../client.js';
import { safetyVerdicts } from '../schema/blobs.js';
import { crawlReports } from '../schema/crawls.js';
import { repositories } from '../schema/repositories.js';
import { skillRevisions, skills } from '../schema/skills.js';
import type { CrawlOutcome } from './crawl-runs.js';
import { storeBlobs, uniqueBy } from './hub-collection-write.js';
import { type SkillRevisionContent, skillContentColumns, skillContentFromExcluded } from './skill-upsert.js';

/** A skill seen in this crawl: with content when its revision is new, without when it is unchanged. */
export interface SeenSkill {
  identity: string;
  path: string;
  revision: string;
  commit: string;
  content?: SkillRevisionContent;
}

export interface ReportEntry {
  path: string;
  code: string;
  message: string;
  /** 1-based line in the file, when known (YAML that does not parse). */
  line?: number;
}

/** The repository metadata the index keeps (a subset of GitHub's full-repository). */
export interface RepositoryMetadata {
  owner: string;
  name: string;
  defaultBranch: string | null;
  description: string | null;
  stars: number;
  license: string | null;
  archived: boolean;
  pushedAt: Date | null;
  topics: string[];
  /** GitHub's id of the repository (a rename or transfer keeps it). */
  githubId?: number | null;
}

/** Everything one repository job writes, applied in one transaction. */
export interface RepositoryIndexWrite {
  repositoryId: number;
  runId: number | null;
  outcome: CrawlOutcome;
  /** The head this crawl saw (null when unknown, e.g. the repository could not be reached). */
  head?: { commit: string | null; branch: string | null } | null;
  /** GitHub's metadata with the ETag it came with (owner and name are the row's own). */
  metadata?: Omit<RepositoryMetadata, 'owner' | 'name'> & { etag: string | null };
  /** Skills seen at this head; null leaves the stored skills as they are (failed, unchanged). */
  skills: SeenSkill[] | null;
  /** The repository is gone upstream: every skill of it is marked gone. */
  repositoryGone?: boolean;
  warnings: ReportEntry[];
  errors: ReportEntry[];
  error?: string | null;
  bytesDownloaded: number;
  startedAt: Date;
}

export interface RepositoryIndexResult {
  /** False when the run already had a report for this repository (a redelivered job): nothing written. */
  written: boolean;
  skillsFound: number;
  skillsAdded: number;
  skillsUpdated: number;
  skillsRemoved: number;
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

/** Cached safety verdicts by content hash, for one scanner version. */
export async function cachedSafetyVerdicts(
  db: Executor,
  contentHashes: string[],
  scannerVersion: string,
): Promise<Map<string, SafetyFinding[]>> {
  if (contentHashes.length === 0) return new Map();
  const rows = await db
    .select()
    .from(safetyVerdicts)
    .where(
      and(
        inArray(safetyVerdicts.contentSha256, contentHashes),
        eq(safetyVerdicts.scannerVersion, scannerVersion),
      ),
    );
  return new Map(rows.map((r) => [r.contentSha256, r.flags as SafetyFinding[]]));
}

const CHUNK = 200;

function chunks<T>(items: T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Writes one repository's crawl in ONE transaction: skills (upserted, their search column current with
 * the row), new revisions, blobs, safety verdicts, gone marks, the repository's head and metadata, and the
 * run's report. A worker killed before the commit leaves nothing behind; a redelivered job whose run
 * already holds a report writes nothing (the repository row lock serialises concurrent writers).
 */
export async function writeRepositoryIndex(
  db: Database,
  input: RepositoryIndexWrite,
): Promise<RepositoryIndexResult> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select id from repositories where id = ${input.repositoryId} for update`);
    if (input.runId !== null) {
      const existing = await tx
        .select({ id: crawlReports.id })
        .from(crawlReports)
        .where(and(eq(crawlReports.runId, input.runId), eq(crawlReports.repositoryId, input.repositoryId)))
        .limit(1);
      if (existing.length > 0) {
        return { written: false, skillsFound: 0, skillsAdded: 0, skillsUpdated: 0, skillsRemoved: 0 };
      }
    }
    const now = new Date();
    const [repo] = await tx.select().from(repositories).where(eq(repositories.id, input.repositoryId));
    if (!repo) throw new Error(`repository ${input.repositoryId} does not exist`);
    const stars = input.metadata?.stars ?? repo.stars;
    const owner = input.metadata ? repo.owner : repo.owner;

    // Without a skill list (unchanged, failed) only the live count matters: no need to read every row.
    const readsSkills = input.skills !== null || input.repositoryGone === true;
    const before = readsSkills
      ? await tx
          .select({
            id: skills.id,
            identity: skills.identity,
            revision: skills.revision,
            goneAt: skills.goneAt,
          })
          .from(skills)
          .where(eq(skills.repositoryId, input.repositoryId))
      : [];
    const [live] = readsSkills
      ? [{ n: before.filter((s) => s.goneAt === null).length }]
      : await tx
          .select({ n: sql<number>`count(*)::int` })
          .from(skills)
          .where(and(eq(skills.repositoryId, input.repositoryId), isNull(skills.goneAt)));
    const beforeByIdentity = new Map(before.map((s) => [s.identity, s]));

    let added = 0;
    let updated = 0;
    let removed = 0;
    const seen = input.skills ?? [];

    // Blobs first (content-addressed, shared across skills and repositories).
    await storeBlobs(
      tx,
      uniqueBy(
        seen.flatMap((s) => s.content?.blobs ?? []),
        (b) => b.sha256,
      ),
    );
    const verdicts = seen.flatMap((s) =>
      s.content?.verdict
        ? [
            {
              contentSha256: s.content.verdict.contentSha256,
              scannerVersion: s.content.verdict.scannerVersion,
              flags: s.content.flags,
            },
          ]
        : [],
    );
    for (const batch of chunks(verdicts)) {
      await tx
        .insert(safetyVerdicts)
        .values([...new Map(batch.map((v) => [v.contentSha256, v])).values()])
        .onConflictDoUpdate({
          target: safetyVerdicts.contentSha256,
          set: { scannerVersion: sql`excluded.scanner_version`, flags: sql`excluded.flags` },
        });
    }

    const changed = seen.filter((s) => s.content);
    for (const batch of chunks(changed)) {
      const rows = batch.map((s) => {
        const c = s.content!;
        return {
          identity: s.identity,
          source: 'gh',
          repositoryId: input.repositoryId,
          owner,
          container: repo.name,
          path: s.path,
          ...skillContentColumns(c),
          revision: s.revision,
          commit: s.commit,
          stars,
          visibility: 'public',
          firstSeenAt: now,
          lastSeenAt: now,
          updatedAt: now,
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
      for (const s of batch) {
        const previous = beforeByIdentity.get(s.identity);
        if (!previous || previous.goneAt !== null) added++;
        else if (previous.revision !== s.revision) updated++;
      }
    }

    // Unchanged skills: still there, seen now; a skill that comes back clears its gone mark.
    const unchanged = seen.filter((s) => !s.content);
    for (const batch of chunks(unchanged)) {
      const identities = batch.map((s) => s.identity);
      for (const s of batch) if (beforeByIdentity.get(s.identity)?.goneAt) added++;
      await tx
        .update(skills)
        .set({ lastSeenAt: now, goneAt: null, stars })
        .where(and(eq(skills.repositoryId, input.repositoryId), inArray(skills.identity, identities)));
    }

    // Skills that disappeared upstream (or the whole repository): they leave search, rows stay for 410s.
    if (input.skills !== null || input.repositoryGone) {
      const keep = input.repositoryGone ? [] : seen.map((s) => s.identity);
      const condition = and(
        eq(skills.repositoryId, input.repositoryId),
        isNull(skills.goneAt),
        keep.length > 0 ? notInArray(skills.identity, keep) : undefined,
      );
      const gone = await tx
        .update(skills)
        .set({ goneAt: now, updatedAt: now })
        .where(condition)
        .returning({ id: skills.id });
      removed = gone.length;
    }
    if (input.metadata && input.skills === null && !input.repositoryGone) {
      await tx.update(skills).set({ stars }).where(eq(skills.repositoryId, input.repositoryId));
    }

    const repoUpdate: Partial<typeof repositories.$inferInsert> = {
      lastCrawledAt: now,
      lastCrawlOutcome: input.outcome,
      lastCrawlError: input.error ?? null,
      updatedAt: now,
      goneAt: input.repositoryGone ? (repo.goneAt ?? now) : null,
    };
    // The problems an author sees: kept from the last crawl that read the tree (an unchanged crawl keeps them).
    if (input.skills !== null || input.outcome === 'failed' || input.outcome === 'gone') {
      repoUpdate.problems = [...input.errors, ...input.warnings];
    }
    if (input.head) {
      repoUpdate.headRevision = input.head.commit;
      if (input.head.branch) repoUpdate.defaultBranch = input.head.branch;
    }
    if (input.metadata) {
      const m = input.metadata;
      Object.assign(repoUpdate, {
        metadataEtag: m.etag,
        description: m.description,
        stars: m.stars,
        license: m.license,
        archived: m.archived,
        pushedAt: m.pushedAt,
        topics: m.topics,
        ...(m.githubId ? { githubId: m.githubId } : {}),
      });
      if (m.defaultBranch && !input.head?.branch) repoUpdate.defaultBranch = m.defaultBranch;
    }
    await tx.update(repositories).set(repoUpdate).where(eq(repositories.id, input.repositoryId));

    // An unchanged repository still holds its skills: count them so run totals stay meaningful.
    const found =
      input.skills !== null ? input.skills.length : input.outcome === 'unchanged' ? (live?.n ?? 0) : 0;
    if (input.runId !== null) {
      await tx.insert(crawlReports).values({
        runId: input.runId,
        repositoryId: input.repositoryId,
        outcome: input.outcome,
        headRevision: input.head?.commit ?? repo.headRevision,
        skillsFound: found,
        skillsAdded: added,
        skillsUpdated: updated,
        skillsRemoved: removed,
        warnings: input.warnings,
        errors: input.errors,
        bytesDownloaded: input.bytesDownloaded,
        durationMs: Math.max(0, now.getTime() - input.startedAt.getTime()),
        startedAt: input.startedAt,
        finishedAt: now,
      });
    }
    return {
      written: true,
      skillsFound: found,
      skillsAdded: added,
      skillsUpdated: updated,
      skillsRemoved: removed,
    };
  });
}
