/** Identifier of one safety rule; one module per rule in this folder. */
export type SafetyRule =
  | 'hidden-unicode'
  | 'prompt-injection'
  | 'exfiltration'
  | 'remote-exec'
  | 'encoded-payload'
  | 'credential'
  | 'trigger-bidding';

export type SafetySeverity = 'info' | 'warn' | 'high';

/**
 * One finding: which rule fired, where, and a short (escaped, redacted where needed) excerpt. The scanner's
 * are `SafetyFinding<SafetyRule>`; stored findings may carry the hub's own rules too (`reported-malicious`).
 */
export interface SafetyFinding<Rule extends string = string> {
  rule: Rule;
  severity: SafetySeverity;
  file: string;
  /** 1-based line number in `file`. */
  line: number;
  /** Short excerpt; invisible and control characters are shown escaped (e.g. `\u202E`). */
  evidence: string;
  message: string;
  /** Set by the hub when administrators accepted a dispute of this rule for this content: the report's id. */
  suppressedBy?: number;
}

/** A hit produced by a rule before the scanner attaches the rule id and file. */
export interface RuleHit {
  line: number;
  severity: SafetySeverity;
  evidence: string;
  message: string;
}

/** The text a rule looks at: the file split into lines (line endings removed). */
export interface ScanInput {
  path: string;
  content: string;
  lines: readonly string[];
}

/** A rule as the scanner runs it; `scan` is pure and returns hits in any order. */
export interface SafetyRuleModule {
  id: SafetyRule;
  /** The most severe level this rule reports. */
  severity: SafetySeverity;
  description: string;
  scan(input: ScanInput): RuleHit[];
}
