import type { StoredFlag } from '@atskills/db';
import type { SafetyFlag } from '@atskills/protocol';

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
  flag: Pick<StoredFlag, 'rule' | 'severity' | 'message' | 'file' | 'line'> &
    Partial<Pick<StoredFlag, 'evidence' | 'suppressedBy'>>,
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
export function flagRules(flags: Pick<StoredFlag, 'rule' | 'suppressedBy'>[]): string[] {
  return [...new Set(flags.filter((f) => f.suppressedBy === undefined).map((f) => f.rule))].sort();
}
