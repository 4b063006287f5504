import type { SearchRow } from '@atskills/db';
import type { SafetyFinding } from '@atskills/protocol';
import type { SearchHit } from './engine.js';

/** A stored flag as search answers carry it: its rule and place, without the evidence. */
export function flagSummary(f: SafetyFinding) {
  return {
    rule: f.rule,
    severity: f.severity,
    file: f.file,
    line: f.line,
    message: f.message,
    // An accepted dispute travels with the flag, so results show it as suppressed.
    ...(f.suppressedBy !== undefined ? { suppressedBy: f.suppressedBy } : {}),
  };
}

/** A database search row as the engine-neutral hit (flags without their evidence snippets). */
export function hitFromRow(row: Omit<SearchRow, 'score'>): SearchHit {
  const hit: SearchHit = {
    kind: row.kind,
    identity: row.identity,
    name: row.name,
    description: row.kind === 'collection' ? `${row.skillCount ?? 0} skills` : row.description,
    source: row.source,
    owner: row.owner,
    container: row.container,
    path: row.path,
    revision: row.revision,
    stars: row.stars,
    descriptionTokens: row.descriptionTokens,
    bodyTokens: row.bodyTokens,
    warnings: row.warnings,
    flags: row.flags.map(flagSummary),
  };
  if (row.kind === 'collection') hit.skillCount = row.skillCount ?? 0;
  return hit;
}
