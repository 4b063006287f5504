import type { StoredFlag } from '@atskills/db';
import type { SafetyFlag } from '@atskills/protocol';

const SEVERITY: Record<string, SafetyFlag['severity']> = {
  high: 'danger',
  danger: 'danger',
  warn: 'warning',
  warning: 'warning',
  info: 'info',
};

/** A stored scanner finding as the wire's SafetyFlag (evidence snippets stay server-side). */
export function wireFlag(
  flag: Pick<StoredFlag, 'rule' | 'severity' | 'message' | 'file' | 'line'>,
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
export function flagRules(flags: Pick<StoredFlag, 'rule'>[]): string[] {
  return [...new Set(flags.map((f) => f.rule))].sort();
}
