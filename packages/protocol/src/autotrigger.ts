/** One meaningful line of `.atskills/.autotrigger`. */
export interface AutotriggerRule {
  line: number;
  text: string;
  negated: boolean;
  kind: 'local' | 'cloud';
  /** local: a gitignore pattern. */
  pattern: string;
  /** cloud: the canonical identity. */
  identity?: string;
}

/** A problem with one line of the file. */
export interface AutotriggerWarning {
  line: number;
  text: string;
  message: string;
}

/** Parses `.autotrigger` content into rules and warnings. */
export function parseAutotrigger(_content: string): {
  rules: AutotriggerRule[];
  warnings: AutotriggerWarning[];
} {
  return { rules: [], warnings: [] };
}

/** Expands `.autotrigger` against the local skill folders (relative to .atskills) into identities, in order. */
export function expandAutotrigger(
  _content: string,
  _localSkills: string[],
): { entries: { identity: string; line: number }[]; warnings: AutotriggerWarning[] } {
  return { entries: [], warnings: [] };
}

/** Appends `line` unless already present. */
export function addAutotriggerLine(content: string, _line: string): string {
  return content;
}

/** Removes exactly `line`, if present. */
export function removeAutotriggerLine(content: string, _line: string): string {
  return content;
}
