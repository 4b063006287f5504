import {
  cachedSafetyVerdicts,
  contentVerdictsFor,
  type Database,
  type SkillRevisionContent,
  withContentVerdict,
} from '@atskills/db';
import type { SafetyFinding } from '@atskills/protocol';
import type { SkillContent } from '@atskills/protocol/content';
import type { ContentPool } from '../content/content-pool.js';
import { SCANNER_VERSION } from '../jobs/safety-verdict.js';
import { inChunks } from './content.js';

/**
 * The verdicts phase: each content's safety flags, from the verdict cached under its content hash for
 * this scanner version, else scanned now on the content pool; an accepted "malicious" verdict holds for
 * its content whatever revision carries it (SPEC 2.8). Returns what the index stores of each, in order.
 */
export async function judgeContent(
  db: Database,
  pool: ContentPool,
  contents: SkillContent<Buffer>[],
): Promise<SkillRevisionContent[]> {
  const hashes = contents.map((c) => c.contentHash);
  const verdicts = await cachedSafetyVerdicts(db, hashes, SCANNER_VERSION);
  const judged = await contentVerdictsFor(db, hashes);
  const misses = contents.filter((c) => !verdicts.has(c.contentHash));
  const scanned = await inChunks(misses, (chunk) => pool.scan(chunk));
  const scannedFlags = new Map(misses.map((content, i) => [content, scanned[i]!]));
  return contents.map((content) => {
    const { contentHash, problems: _problems, flags: _deferred, ...stored } = content;
    const flags: SafetyFinding[] = withContentVerdict(
      verdicts.get(contentHash) ?? scannedFlags.get(content) ?? [],
      judged.get(contentHash),
    );
    return { ...stored, flags, verdict: { contentSha256: contentHash, scannerVersion: SCANNER_VERSION } };
  });
}
