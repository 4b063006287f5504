import { findFrontmatterDescription } from './frontmatter-description.js';
import { RULE_MODULES } from './rules.js';
import { scanDescriptionLines } from './trigger-bidding.js';
import type { RuleHit, SafetyFinding, SafetyRule } from './types.js';

/** The `file` of flags raised on `opts.description` when no SKILL.md carries the same text. */
export const DESCRIPTION_FILE = '(description)';

function splitLines(content: string): string[] {
  return content.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
}

function toFlags(rule: SafetyRule, file: string, hits: readonly RuleHit[]): SafetyFinding<SafetyRule>[] {
  return hits.map(({ line, severity, evidence, message }) => ({
    rule,
    severity,
    file,
    line,
    evidence,
    message,
  }));
}

function compareFlags(a: SafetyFinding<SafetyRule>, b: SafetyFinding<SafetyRule>): number {
  if (a.file !== b.file) return a.file < b.file ? -1 : 1;
  if (a.line !== b.line) return a.line - b.line;
  if (a.rule !== b.rule) return a.rule < b.rule ? -1 : 1;
  return a.message < b.message ? -1 : a.message > b.message ? 1 : 0;
}

/** Runs every rule over one file; flags sorted by line, then rule. */
export function scanText(path: string, content: string): SafetyFinding<SafetyRule>[] {
  const lines = splitLines(content);
  const flags = RULE_MODULES.flatMap((rule) => toFlags(rule.id, path, rule.scan({ path, content, lines })));
  return flags.sort(compareFlags);
}

const normalize = (text: string) => text.replace(/\s+/g, ' ').trim();

/**
 * Scans a skill's files (and, when given, its description as the registry knows it); flags sorted by
 * file, line, rule. A description identical to a scanned file's frontmatter description is reported once,
 * against that file and line.
 */
export function scanSkillFiles(
  files: readonly { path: string; content: string }[],
  opts: { description?: string } = {},
): SafetyFinding<SafetyRule>[] {
  const flags = files.flatMap((file) => scanText(file.path, file.content));
  const description = opts.description;
  if (description !== undefined && description.trim() !== '') {
    const wanted = normalize(description);
    const alreadyScanned = files.some((file) => {
      const found = findFrontmatterDescription(splitLines(file.content));
      if (!found) return false;
      const raw = normalize(found.map((part) => part.text).join(' '));
      // The frontmatter holds the value as YAML source (maybe quoted or a block scalar), so compare loosely.
      return raw === wanted || raw.replace(/^[|>][+-]?\s*/, '').replace(/^(["'])(.*)\1$/, '$2') === wanted;
    });
    if (!alreadyScanned) {
      const lines = splitLines(description).map((text, index) => ({ line: index + 1, text }));
      flags.push(...toFlags('trigger-bidding', DESCRIPTION_FILE, scanDescriptionLines(lines)));
    }
  }
  return flags.sort(compareFlags);
}

/** Number of flags per scanner rule (every rule present, zero when it did not fire; other rules ignored). */
export function summarizeFlags(flags: readonly SafetyFinding[]): Record<SafetyRule, number> {
  const counts = Object.fromEntries(RULE_MODULES.map((rule) => [rule.id, 0])) as Record<SafetyRule, number>;
  for (const flag of flags) if (flag.rule in counts) counts[flag.rule as SafetyRule]++;
  return counts;
}
