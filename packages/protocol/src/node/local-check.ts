import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describeWarning, strictProblems, tryParseSkillMarkdown } from '../frontmatter.js';
import { SKILL_FILE } from '../leaf-rule.js';

/** A project skill that breaks a rule of SPEC 1.1: the file, the rule's code, and what is wrong. */
export interface LocalSkillProblem {
  /** The SKILL.md, relative to the project root (e.g. `.atskills/deploy/runbook/SKILL.md`). */
  file: string;
  rule: string;
  message: string;
  /** True when the skill has no usable name and description (so it cannot sit in the resident block). */
  unusable: boolean;
}

// A resident row without one of these says nothing; an agent cannot decide to load it.
const UNUSABLE = new Set(['name-empty', 'description-empty']);

/**
 * Validates a project skill's SKILL.md like the hub validates a published one (SPEC 1.1): frontmatter that
 * does not parse or is missing, and every name/description rule. Empty when the skill is valid.
 */
export function skillMarkdownProblems(
  content: Buffer | string,
  file: string,
  folder: string,
): LocalSkillProblem[] {
  const parsed = tryParseSkillMarkdown(content, folder);
  if (!parsed.ok) return [{ file, rule: parsed.error.code, message: parsed.error.message, unusable: true }];
  return strictProblems(parsed.doc).map((rule) => ({
    file,
    rule,
    message: describeWarning(rule),
    unusable: UNUSABLE.has(rule),
  }));
}

/** Reads and validates `<dir>/SKILL.md` of a project skill; the file is named relative to `projectDir`. */
export async function checkLocalSkill(dir: string, projectDir: string): Promise<LocalSkillProblem[]> {
  const file = path.relative(projectDir, path.join(dir, SKILL_FILE)).split(path.sep).join('/');
  return skillMarkdownProblems(await readFile(path.join(dir, SKILL_FILE)), file, path.basename(dir));
}

/** One line for a problem: `<file>: <message> [<rule>]`. */
export function describeLocalProblem(p: LocalSkillProblem): string {
  return `${p.file}: ${p.message} [${p.rule}]`;
}
