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
 * A stored scanner finding as the wire's SafetyFlag (evidence snippets stay server-side). Rule and
 * severity are read as plain text: rows written by older scanners hold `danger`/`warning` too.
 */
export function wireFlag(
  flag: Pick<SafetyFinding, 'message' | 'file' | 'line'> & { rule: string; severity: string },
): SafetyFlag {
  return {
    code: flag.rule,
    severity: SEVERITY[flag.severity] ?? 'warning',
    message: flag.message,
    ...(flag.file ? { file: flag.file } : {}),
    ...(Number.isInteger(flag.line) && flag.line > 0 ? { line: flag.line } : {}),
  };
}

/** The distinct rule ids of a skill's flags, for the X-Skill-Flags header. */
export function flagRules(flags: { rule: string }[]): string[] {
  return [...new Set(flags.map((f) => f.rule))].sort();
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
