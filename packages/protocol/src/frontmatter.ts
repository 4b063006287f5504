import { FrontmatterError } from './errors.js';

/** A rule break that still lets a skill be indexed (but not published). */
export type FrontmatterWarning =
  | 'name-format'
  | 'name-too-long'
  | 'name-folder-mismatch'
  | 'description-too-long'
  | 'description-empty'
  | 'name-empty';

/** A parsed SKILL.md. */
export interface SkillDocument {
  name: string;
  description: string;
  frontmatter: Record<string, unknown>;
  body: string;
  warnings: FrontmatterWarning[];
}

/** Parses a SKILL.md; throws only FrontmatterError. */
export function parseSkillMarkdown(_content: string | Uint8Array, _folder: string): SkillDocument {
  throw new FrontmatterError('no-frontmatter', 'not implemented');
}

/** Like parseSkillMarkdown, but returns the error instead of throwing it. */
export function tryParseSkillMarkdown(
  content: string | Uint8Array,
  folder: string,
): { ok: true; doc: SkillDocument } | { ok: false; error: FrontmatterError } {
  try {
    return { ok: true, doc: parseSkillMarkdown(content, folder) };
  } catch (error) {
    if (error instanceof FrontmatterError) return { ok: false, error };
    throw error;
  }
}

/** The warnings a publish must reject. */
export function strictProblems(doc: SkillDocument): FrontmatterWarning[] {
  return [...doc.warnings];
}
