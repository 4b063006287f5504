import {
  addReportedFlag,
  appendAudit,
  countReportsSince,
  type Database,
  decideSkillReport,
  findNamespace,
  findSkillReport,
  insertSkillReport,
  listSkillReports,
  lockReporter,
  reportedMaliciousFlag,
  type SkillReportRow,
  suppressFlag,
} from '@atskills/db';
import { skillContentHash } from '@atskills/protocol/content';
import { problem } from '../problems.js';
import type { ActionContext } from './auth/accounts.js';
import { isHubAdmin } from './auth/permissions.js';
import type { Viewer } from './auth/viewer.js';
import { resolveIdentity } from './resolve.js';

/** Reports one user may file per hour. */
export const MAX_REPORTS_PER_HOUR = 10;
/** The flag an accepted "malicious" report adds to every skill with the judged content. */
export { REPORTED_MALICIOUS_RULE } from '@atskills/db';

/** A report as the API shows it. */
export interface ReportView {
  id: number;
  identity: string;
  revision: string;
  kind: string;
  rule: string | null;
  contentHash: string | null;
  note: string;
  status: string;
  reporter: string | null;
  decidedBy: string | null;
  decisionNote: string | null;
  decidedAt: string | null;
  createdAt: string;
}

function view(
  r: SkillReportRow,
  names: { reporter?: string | null; decider?: string | null } = {},
): ReportView {
  return {
    id: r.id,
    identity: r.identity,
    revision: r.revision,
    kind: r.kind,
    rule: r.rule,
    contentHash: r.contentHash,
    note: r.note,
    status: r.status,
    reporter: names.reporter ?? null,
    decidedBy: names.decider ?? null,
    decisionNote: r.decisionNote,
    decidedAt: r.decidedAt?.toISOString() ?? null,
    createdAt: r.createdAt.toISOString(),
  };
}

/** The namespace a hub: identity's audit entries go to (gh: skills have none). */
async function auditNamespaceOf(db: Database, identity: string): Promise<number | null> {
  if (!identity.startsWith('hub:')) return null;
  const namespace = identity.slice(4).split('/')[0] ?? '';
  return (await findNamespace(db, namespace))?.id ?? null;
}

/**
 * Files a report about a skill the caller can see: a dispute of one of its flags at a revision (`rule`), or
 * a report that it is malicious. Any valid token may report (authors and users alike), at most
 * MAX_REPORTS_PER_HOUR an hour per user. A skill the caller cannot see is a 404 like a missing one.
 */
export async function fileReport(
  db: Database,
  viewer: Viewer,
  identityText: string,
  input: {
    kind: 'dispute' | 'malicious';
    rule?: string | undefined;
    revision?: string | undefined;
    note: string;
  },
  ctx: Omit<ActionContext, 'authority'>,
): Promise<ReportView> {
  if (viewer.userId === null) {
    throw problem(
      'unauthorized',
      'Reports need a token: Authorization: Bearer ask_...',
      {},
      {
        'www-authenticate': 'Bearer realm="atskills"',
      },
    );
  }
  const since = new Date(ctx.now.getTime() - 3_600_000);
  // A cheap early refusal; the count that decides is taken again under the reporter's lock below.
  if ((await countReportsSince(db, viewer.userId, since)) >= MAX_REPORTS_PER_HOUR) throw reportLimit();
  const resolved = await resolveIdentity(db, viewer, identityText, input.revision);
  if (resolved.kind !== 'skill')
    throw problem('not-a-skill', `${resolved.identity} is a menu; report its skills`);
  let rule: string | null = null;
  if (input.kind === 'dispute') {
    const flagged = resolved.flags.filter((f) => f.suppressedBy === undefined).map((f) => f.rule);
    if (!input.rule || !flagged.includes(input.rule)) {
      throw problem(
        'bad-request',
        `${resolved.identity} at ${resolved.revision} has no active "${input.rule ?? ''}" flag to dispute${flagged.length ? `; its flags: ${[...new Set(flagged)].join(', ')}` : ''}.`,
      );
    }
    rule = input.rule;
  }
  const contentHash = skillContentHash(resolved.files.filter((f) => !f.skipped));
  const namespaceId = await auditNamespaceOf(db, resolved.identity);
  return db.transaction(async (tx) => {
    await lockReporter(tx, viewer.userId as number);
    if ((await countReportsSince(tx, viewer.userId as number, since)) >= MAX_REPORTS_PER_HOUR) {
      throw reportLimit();
    }
    const row = await insertSkillReport(tx, {
      identity: resolved.identity,
      revision: resolved.revision,
      kind: input.kind,
      rule,
      contentHash,
      reporterUserId: viewer.userId as number,
      note: input.note.trim(),
      at: ctx.now,
    });
    await appendAudit(tx, {
      namespaceId,
      actorUserId: viewer.userId,
      action: 'report.create',
      target: `${resolved.identity}@${resolved.revision}`,
      details: { report: row.id, kind: input.kind, rule },
      requestId: ctx.requestId ?? null,
      at: ctx.now,
    });
    return view(row, { reporter: viewer.userName ?? null });
  });
}

function reportLimit() {
  return problem(
    'rate-limited',
    `At most ${MAX_REPORTS_PER_HOUR} reports an hour per user; try again later.`,
    { limit: MAX_REPORTS_PER_HOUR },
    { 'retry-after': '3600' },
  );
}

function requireHubAdmin(ctx: ActionContext): void {
  if (ctx.authority.kind === 'operator') return;
  const viewer = ctx.authority.viewer;
  if (viewer.userId === null) throw problem('unauthorized', 'Send a token: Authorization: Bearer ask_...');
  if (!isHubAdmin(viewer)) throw problem('forbidden', 'Only hub administrators review reports.');
}

/** Reports for hub administrators to review, newest first. */
export async function reviewQueue(
  db: Database,
  status: string | undefined,
  limit: number,
  ctx: ActionContext,
) {
  requireHubAdmin(ctx);
  return (await listSkillReports(db, { ...(status ? { status } : {}), limit })).map((r) => view(r, r));
}

/**
 * A hub administrator's decision on an open report, with a note; recorded in the audit log. An accepted
 * dispute suppresses that rule for that content hash (shown as suppressed, out of X-Skill-Flags; a new
 * revision is scanned afresh); an accepted "malicious" report adds a `reported-malicious` flag to the
 * judged content: the skill at that revision, any revision of it with the same content, and (as they are
 * written or read) every other revision with that content.
 */
export async function decideReport(
  db: Database,
  id: number,
  decision: 'accept' | 'reject',
  note: string,
  ctx: ActionContext,
): Promise<ReportView> {
  requireHubAdmin(ctx);
  const report = await findSkillReport(db, id);
  if (!report) throw problem('not-found', `No report ${id}.`);
  if (report.status !== 'open') throw problem('conflict', `Report ${id} was already ${report.status}.`);
  const actor = ctx.authority.kind === 'viewer' ? ctx.authority.viewer.userId : null;
  const namespaceId = await auditNamespaceOf(db, report.identity);
  const status = decision === 'accept' ? 'accepted' : 'rejected';
  await db.transaction(async (tx) => {
    if (!(await decideSkillReport(tx, { id, status, decidedBy: actor, note: note.trim(), at: ctx.now }))) {
      throw problem('conflict', `Report ${id} was already decided.`);
    }
    if (decision === 'accept' && report.kind === 'dispute' && report.rule && report.contentHash) {
      await suppressFlag(tx, {
        contentHash: report.contentHash,
        revision: report.revision,
        rule: report.rule,
        reportId: id,
      });
    }
    if (decision === 'accept' && report.kind === 'malicious') {
      const judged = report.contentHash;
      await addReportedFlag(
        tx,
        {
          revision: report.revision,
          identity: report.identity,
          sameContent: (files) =>
            judged !== null && skillContentHash(files.filter((f) => !f.skipped)) === judged,
        },
        reportedMaliciousFlag(note),
      );
    }
    await appendAudit(tx, {
      namespaceId,
      actorUserId: actor,
      action: `report.${decision}`,
      target: `${report.identity}@${report.revision}`,
      details: { report: id, kind: report.kind, rule: report.rule, note: note.trim() },
      requestId: ctx.requestId ?? null,
      at: ctx.now,
    });
  });
  const decided = (await findSkillReport(db, id)) as SkillReportRow;
  return view(decided, {
    decider: ctx.authority.kind === 'viewer' ? (ctx.authority.viewer.userName ?? null) : 'operator',
  });
}
