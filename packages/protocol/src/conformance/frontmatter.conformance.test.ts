import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FrontmatterError } from '../errors.js';
import { parseSkillMarkdown } from '../frontmatter.js';

const dir =
  process.env.ATSKILLS_CONFORMANCE_DIR ??
  path.resolve(import.meta.dirname, '../../../../..', 'shared', 'conformance');

interface FrontmatterCase {
  folder: string;
  content: string;
  name?: string;
  description?: string;
  warnings?: string[];
  error?: string;
}

const vectors = JSON.parse(readFileSync(path.join(dir, 'frontmatter.json'), 'utf8')) as {
  cases: FrontmatterCase[];
};

describe('conformance: frontmatter.json', () => {
  it('has vectors', () => expect(vectors.cases.length).toBeGreaterThan(0));

  it.each(vectors.cases.map((c, i) => [i, c] as const))('case %i', (_i, c) => {
    for (const content of [c.content, new TextEncoder().encode(c.content)]) {
      if (c.error !== undefined) {
        let thrown: unknown;
        try {
          parseSkillMarkdown(content, c.folder);
        } catch (error) {
          thrown = error;
        }
        expect(thrown).toBeInstanceOf(FrontmatterError);
        expect((thrown as FrontmatterError).code).toBe(c.error);
        continue;
      }
      const doc = parseSkillMarkdown(content, c.folder);
      // A vector may leave out a field it does not pin (e.g. a very long description).
      if (c.name !== undefined) expect(doc.name).toBe(c.name);
      if (c.description !== undefined) expect(doc.description).toBe(c.description);
      expect([...doc.warnings].sort()).toEqual([...(c.warnings ?? [])].sort());
    }
  });
});
