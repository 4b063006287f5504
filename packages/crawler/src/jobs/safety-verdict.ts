import { createHash } from 'node:crypto';

import { type SafetyFinding, scanSkillFiles } from '@atskills/protocol';

/**
 * Version of the verdicts cached in safety_verdicts: bump it when the scanner's rules change so cached
 * verdicts are recomputed instead of reused.
 */
export const SCANNER_VERSION = 'safety-scanner-1';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The content hash a verdict is cached under: sha256 over the sorted (path, sha256) list of the skill's files. */
export function skillContentHash(files: { path: string; sha256: string }[]): string {
  const lines = files
    .map((f) => `${f.path}\0${f.sha256}`)
    .sort()
    .join('\n');
  return createHash('sha256').update(lines).digest('hex');
}

/** Runs the safety scanner over a skill's text files (binary files cannot carry instructions to a model). */
export function scanSkill(files: { path: string; content: Buffer }[], description: string): SafetyFinding[] {
  const texts: { path: string; content: string }[] = [];
  for (const file of files) {
    try {
      texts.push({ path: file.path, content: utf8.decode(file.content) });
    } catch {
      // not UTF-8 text
    }
  }
  return scanSkillFiles(texts, { description }).map((f) => ({ ...f }));
}
