import { type Database, findSkillFindings, type ReadScope } from '@atskills/db';
import type { SafetyFinding, SafetyFlag } from '@atskills/protocol';

const SEVERITY: Record<string, SafetyFlag['severity']> = {
  high: 'danger',
  danger: 'danger',
  warn: 'warning',
  warning: 'warning',
  info: 'info',
};

/**
 * A stored scanner finding as the wire's SafetyFlag: rule, file, line and the excerpt it matched, the
 * revision it belongs to, and whether an accepted dispute suppressed it. Search results leave the excerpt
 * out (`withExcerpt: false`): it is for the one skill's answer, where a person can act on it.
 */
export function wireFlag(
  // Severity as plain text: rows written by older scanners hold `danger`/`warning` too.
  flag: Pick<SafetyFinding, 'rule' | 'message' | 'file' | 'line'> & { severity: string } & Partial<
      Pick<SafetyFinding, 'evidence' | 'suppressedBy'>
    >,
  options: { revision?: string; withExcerpt?: boolean } = {},
): SafetyFlag {
  return {
    code: flag.rule,
    severity: SEVERITY[flag.severity] ?? 'warning',
    message: flag.message,
    ...(flag.file ? { file: flag.file } : {}),
    ...(Number.isInteger(flag.line) && flag.line > 0 ? { line: flag.line } : {}),
    ...(options.withExcerpt && flag.evidence ? { excerpt: flag.evidence } : {}),
    ...(options.revision ? { revision: options.revision } : {}),
    ...(flag.suppressedBy !== undefined ? { suppressed: true, suppressedBy: flag.suppressedBy } : {}),
  };
}

/** The distinct rule ids of a skill's flags that still hold (not suppressed), for the X-Skill-Flags header. */
export function flagRules(flags: Pick<SafetyFinding, 'rule' | 'suppressedBy'>[]): string[] {
  return [...new Set(flags.filter((f) => f.suppressedBy === undefined).map((f) => f.rule))].sort();
}

/**
 * The stored findings (with evidence) of the flagged skills among search hits, read with the viewer's
 * scope in one query. The search API leaves evidence out of its answers; the web page shows it on hover.
 */
export async function findingsOfHits(
  db: Database,
  viewer: ReadScope,
  hits: { kind: string; identity: string; flags: unknown[] }[],
): Promise<Map<string, SafetyFinding[]>> {
  const flagged = hits.filter((h) => h.kind === 'skill' && h.flags.length > 0).map((h) => h.identity);
  return findSkillFindings(db, viewer, flagged);
}
