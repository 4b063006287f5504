import type { SafetyFinding } from '@atskills/protocol';
import { and, desc, eq, gte, inArray, sql } from 'drizzle-orm';
import type { Executor } from '../client.js';
import { flagSuppressions, skillReports } from '../schema/security.js';
import type { SkillFile } from '../schema/skills.js';
import { setSkillFlags, skillFlagsAtRevision, skillFlagsAtRevisionOrIdentity } from './skills/flags.js';

// Table family `skill_reports` and `flag_suppressions` (src/schema/security.ts): reports about a skill
// (a disputed flag, a malicious skill), their decisions, and what an accepted one changes in the flags of
// skill rows (through skills/flags.ts).

export type SkillReportRow = typeof skillReports.$inferSelect;

/** A report with its reporter's and decider's names. */
export type SkillReportView = SkillReportRow & { reporter: string | null; decider: string | null };

/** Stores a new report (status open). */
export async function insertSkillReport(
  tx: Executor,
  input: {
    identity: string;
    revision: string;
    kind: 'dispute' | 'malicious';
    rule: string | null;
    contentHash: string;
    reporterUserId: number;
    note: string;
    at: Date;
  },
): Promise<SkillReportRow> {
  const { at, ...values } = input;
  const [row] = await tx
    .insert(skillReports)
    .values({ ...values, createdAt: at })
    .returning();
  if (!row) throw new Error('insert into skill_reports returned no row');
  return row;
}

/**
 * Serializes one user's report filing until the transaction ends (a transaction-scoped advisory lock keyed
 * by the user), so the count of the rate limit and the insert it allows are one step: parallel requests
 * cannot all count the same total and all insert.
 */
export async function lockReporter(tx: Executor, userId: number): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext('skill-report'), ${userId}::int)`);
}

/** How many reports a user filed since `since` (the report rate limit). */
export async function countReportsSince(db: Executor, userId: number, since: Date): Promise<number> {
  const [row] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(skillReports)
    .where(and(eq(skillReports.reporterUserId, userId), gte(skillReports.createdAt, since)));
  return row?.n ?? 0;
}

/** Reports, newest first, optionally of one status. */
export async function listSkillReports(
  db: Executor,
  opts: { status?: string; limit: number },
): Promise<SkillReportView[]> {
  const reporter = sql<
    string | null
  >`(select u.name from users u where u.id = ${skillReports.reporterUserId})`;
  const decider = sql<string | null>`(select u.name from users u where u.id = ${skillReports.decidedBy})`;
  return db
    .select({ report: skillReports, reporter, decider })
    .from(skillReports)
    .where(opts.status ? eq(skillReports.status, opts.status) : sql`true`)
    .orderBy(desc(skillReports.id))
    .limit(opts.limit)
    .then((rows) => rows.map((r) => ({ ...r.report, reporter: r.reporter, decider: r.decider })));
}

/** A report by id. */
export async function findSkillReport(db: Executor, id: number): Promise<SkillReportRow | undefined> {
  const [row] = await db.select().from(skillReports).where(eq(skillReports.id, id)).limit(1);
  return row;
}

/** Records the decision on an open report; false when it was already decided. */
export async function decideSkillReport(
  tx: Executor,
  input: { id: number; status: 'accepted' | 'rejected'; decidedBy: number | null; note: string; at: Date },
): Promise<boolean> {
  const updated = await tx
    .update(skillReports)
    .set({ status: input.status, decidedBy: input.decidedBy, decisionNote: input.note, decidedAt: input.at })
    .where(and(eq(skillReports.id, input.id), eq(skillReports.status, 'open')))
    .returning({ id: skillReports.id });
  return updated.length > 0;
}

/**
 * Suppresses `rule` for one content hash (an accepted dispute) and marks the matching flags of every
 * current skill row at that revision, so every read path (skill, header, search, page) shows the flag as
 * disputed; the write goes through `skills`, whose change feed drops the API's read caches.
 */
export async function suppressFlag(
  tx: Executor,
  input: { contentHash: string; revision: string; rule: string; reportId: number },
): Promise<void> {
  await tx
    .insert(flagSuppressions)
    .values({ contentHash: input.contentHash, rule: input.rule, reportId: input.reportId })
    .onConflictDoNothing();
  await rewriteFlags(tx, input.revision, (flags) =>
    flags.map((f) =>
      f.rule === input.rule && f.suppressedBy === undefined ? { ...f, suppressedBy: input.reportId } : f,
    ),
  );
}

/** The flag an accepted report that a skill is malicious adds to every skill with that content. */
export const REPORTED_MALICIOUS_RULE = 'reported-malicious';

/** The `reported-malicious` flag of an accepted report, with the administrators' note. */
export function reportedMaliciousFlag(note: string | null): SafetyFinding {
  return {
    rule: REPORTED_MALICIOUS_RULE,
    severity: 'high',
    file: '',
    line: 0,
    evidence: '',
    message: `Hub administrators confirmed a report that this skill is malicious: ${note?.trim() || 'no note'}`,
  };
}

/**
 * Adds a flag to the current skill rows at `revision` and to those of `identity` whose content is the
 * judged content (`sameContent` on their files: a re-publish or re-crawl of the same bytes under a new
 * revision). Copies under other identities take it at their next publish or crawl (contentVerdictsFor).
 */
export async function addReportedFlag(
  tx: Executor,
  target: { revision: string; identity: string; sameContent: (files: SkillFile[]) => boolean },
  flag: SafetyFinding,
): Promise<void> {
  const rows = await skillFlagsAtRevisionOrIdentity(tx, target.revision, target.identity);
  for (const row of rows) {
    if (row.revision !== target.revision && !target.sameContent(row.files)) continue;
    await setSkillFlags(tx, row.id, withContentVerdict(row.flags, flag));
  }
}

/**
 * Accepted "malicious" verdicts by content hash (the `reported-malicious` flag each adds): a verdict on
 * content holds for every revision with that content, whenever it is written or read.
 */
export async function contentVerdictsFor(
  db: Executor,
  contentHashes: string[],
): Promise<Map<string, SafetyFinding>> {
  const out = new Map<string, SafetyFinding>();
  if (contentHashes.length === 0) return out;
  const rows = await db
    .select({ contentHash: skillReports.contentHash, note: skillReports.decisionNote, id: skillReports.id })
    .from(skillReports)
    .where(
      and(
        inArray(skillReports.contentHash, [...new Set(contentHashes)]),
        eq(skillReports.kind, 'malicious'),
        eq(skillReports.status, 'accepted'),
      ),
    )
    .orderBy(skillReports.id);
  for (const row of rows) {
    if (row.contentHash && !out.has(row.contentHash))
      out.set(row.contentHash, reportedMaliciousFlag(row.note));
  }
  return out;
}

/** Flags with a content verdict added (replacing an older flag of its rule); unchanged without one. */
export function withContentVerdict(
  flags: SafetyFinding[],
  verdict: SafetyFinding | undefined,
): SafetyFinding[] {
  return verdict ? [...flags.filter((f) => f.rule !== verdict.rule), verdict] : flags;
}

/** Rewrites the flags of every current skill row at `revision`. */
async function rewriteFlags(
  tx: Executor,
  revision: string,
  change: (flags: SafetyFinding[]) => SafetyFinding[],
) {
  for (const row of await skillFlagsAtRevision(tx, revision)) {
    await setSkillFlags(tx, row.id, change(row.flags));
  }
}

/** The rules suppressed for each of these content hashes (accepted disputes), with their report ids. */
export async function suppressionsFor(
  db: Executor,
  contentHashes: string[],
): Promise<Map<string, Map<string, number | null>>> {
  const out = new Map<string, Map<string, number | null>>();
  if (contentHashes.length === 0) return out;
  const rows = await db
    .select()
    .from(flagSuppressions)
    .where(inArray(flagSuppressions.contentHash, [...new Set(contentHashes)]));
  for (const row of rows) {
    const rules = out.get(row.contentHash) ?? new Map<string, number | null>();
    rules.set(row.rule, row.reportId);
    out.set(row.contentHash, rules);
  }
  return out;
}
