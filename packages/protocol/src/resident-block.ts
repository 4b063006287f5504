import { type AutotriggerWarning, expandAutotrigger } from './autotrigger.js';
import { flaggedNote } from './frame.js';
import { tryParseSkillMarkdown } from './frontmatter.js';
import { diskPath, formatIdentity, parseIdentity } from './identity.js';
import { oneLine } from './menu.js';
import { trimEdgeSlashes } from './slashes.js';

/** One row of the resident block. */
export interface ResidentEntry {
  name: string;
  description: string;
  identity: string;
  /** The hub's safety flag codes of the skill (SPEC 2.8): the row names them. */
  flags?: readonly string[];
}

/**
 * Rows `- <name>: <description> (<identity>)` joined by \n, no trailing newline, deduped by identity (first
 * wins); a flagged skill's row ends with `[flagged: <codes>]`.
 */
export function renderResidentBlock(entries: ResidentEntry[]): string {
  const seen = new Set<string>();
  const rows: string[] = [];
  for (const entry of entries) {
    if (seen.has(entry.identity)) continue;
    seen.add(entry.identity);
    const flagged = flaggedNote(entry.flags?.map(oneLine) ?? [], ' ');
    rows.push(`- ${oneLine(entry.name)}: ${oneLine(entry.description)} (${entry.identity})${flagged}`);
  }
  return rows.join('\n');
}

/** What resolving `.autotrigger` against the project's own skills found. */
export interface LocalResidentResolution {
  entries: ResidentEntry[];
  /** Identities with no usable local copy: the caller resolves them in the cloud (or reports them). */
  unresolved: { identity: string; line: number; reason: string }[];
  warnings: AutotriggerWarning[];
}

/**
 * Resolves every `.autotrigger` entry local first: `localSkills` maps a skill folder (relative to .atskills)
 * to its SKILL.md content. Pure, so hosts, the CLI and tests share it; the network part is the caller's.
 */
export function resolveResidentEntries(
  autotriggerContent: string,
  localSkills: Map<string, string>,
): LocalResidentResolution {
  const { entries, warnings, excluded } = expandAutotrigger(autotriggerContent, [...localSkills.keys()]);
  const byFolder = new Map([...localSkills].map(([folder, content]) => [trimEdgeSlashes(folder), content]));
  const resolved: ResidentEntry[] = [];
  const unresolved: LocalResidentResolution['unresolved'] = [];
  const excludedSet = new Set(excluded);
  const taken = new Set<string>();
  const take = (identity: string, folder: string, line: number, fromDirectory = false) => {
    if (taken.has(identity) || (fromDirectory && excludedSet.has(identity))) return;
    taken.add(identity);
    const content = byFolder.get(folder) as string;
    const parsed = tryParseSkillMarkdown(content, folder);
    if (!parsed.ok) {
      unresolved.push({ identity, line, reason: `SKILL.md: ${parsed.error.message}` });
      return;
    }
    resolved.push({ name: parsed.doc.name, description: parsed.doc.description, identity });
  };
  for (const { identity, line, directory } of entries) {
    const id = parseIdentity(identity);
    const folder = diskPath(id).slice('.atskills/'.length);
    if (directory && !byFolder.has(folder)) {
      // A whole-directory line answers local first too: the skills saved under its folder.
      const inside = [...byFolder.keys()].filter((f) => f.startsWith(`${folder}/`)).sort();
      if (inside.length === 0) unresolved.push({ identity, line, reason: 'no local copy' });
      for (const f of inside)
        take(formatIdentity(id.source, `${id.path}${f.slice(folder.length)}`), f, line, true);
      continue;
    }
    const content = byFolder.get(folder);
    if (content === undefined) {
      unresolved.push({ identity, line, reason: 'no local copy' });
      continue;
    }
    take(identity, folder, line);
  }
  return { entries: resolved, unresolved, warnings };
}

/** The resident block of `.autotrigger` content resolved against local SKILL.md contents keyed by folder. */
export function buildResidentBlock(autotriggerContent: string, localSkills: Map<string, string>): string {
  return renderResidentBlock(resolveResidentEntries(autotriggerContent, localSkills).entries);
}
