import { encode } from 'gpt-tokenizer/encoding/o200k_base';

/** One row of the resident block. */
export interface ResidentEntry {
  name: string;
  description: string;
  identity: string;
}

/** Rows `- <name>: <description> (<identity>)` joined by \n, deduped by identity (first wins). */
export function renderResidentBlock(entries: ResidentEntry[]): string {
  const seen = new Set<string>();
  const rows: string[] = [];
  for (const e of entries) {
    if (seen.has(e.identity)) continue;
    seen.add(e.identity);
    rows.push(`- ${e.name}: ${e.description} (${e.identity})`);
  }
  return rows.join('\n');
}

/** Token count of `text` in the o200k_base encoding. */
export function countTokens(text: string): number {
  return encode(text).length;
}

/** Builds the resident block from `.autotrigger` content and local SKILL.md contents keyed by folder. */
export function buildResidentBlock(_autotriggerContent: string, _localSkills: Map<string, string>): string {
  return '';
}
