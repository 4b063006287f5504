import type { SafetyFinding } from '@atskills/protocol';
import { sql } from 'drizzle-orm';
import type { SkillFile } from '../../schema/skills.js';

/**
 * What a new revision of a skill writes: its skill_revisions columns, the blobs to store and the verdict to
 * cache (built from the protocol's `SkillContent`, the result of reading a skill folder).
 */
export interface SkillRevisionContent {
  name: string;
  description: string;
  frontmatter: Record<string, unknown>;
  body: string;
  warnings: string[];
  parseError: { code: string; message: string } | null;
  files: SkillFile[];
  flags: SafetyFinding[];
  descriptionTokens: number;
  bodyTokens: number;
  /** Contents to store, content-addressed (deduplicated against what is stored). */
  blobs: { sha256: string; size: number; content: Buffer }[];
  /** Safety verdict to cache under the skill's content hash. */
  verdict?: { contentSha256: string; scannerVersion: string };
}

/**
 * The content columns an upsert of a skill row takes from the incoming row (`excluded`), shared by the
 * crawler's and the publisher's writes so both refresh the same columns; each adds its own extras
 * (stars and parse errors for crawled skills, owner and visibility for published ones).
 */
export function skillContentFromExcluded() {
  return {
    path: sql`excluded.path`,
    name: sql`excluded.name`,
    description: sql`excluded.description`,
    frontmatter: sql`excluded.frontmatter`,
    body: sql`excluded.body`,
    warnings: sql`excluded.warnings`,
    files: sql`excluded.files`,
    flags: sql`excluded.flags`,
    revision: sql`excluded.revision`,
    commit: sql`excluded.commit`,
    descriptionTokens: sql`excluded.description_tokens`,
    bodyTokens: sql`excluded.body_tokens`,
    lastSeenAt: sql`excluded.last_seen_at`,
    updatedAt: sql`excluded.updated_at`,
    goneAt: sql`null`,
  };
}

/** The content columns of a skill row from its parsed content (the values `skillContentFromExcluded` refreshes). */
export function skillContentColumns(content: SkillRevisionContent) {
  return {
    name: content.name,
    description: content.description,
    frontmatter: content.frontmatter,
    body: content.body,
    warnings: content.warnings,
    parseError: content.parseError,
    files: content.files,
    flags: content.flags,
    descriptionTokens: content.descriptionTokens,
    bodyTokens: content.bodyTokens,
  };
}
