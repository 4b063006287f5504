import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FrontmatterError } from './errors.js';
import { parseSkillMarkdown } from './frontmatter.js';

const yamlish = fc
  .array(
    fc.oneof(
      fc.constantFrom(
        'name: x',
        'description: d',
        'name: 42',
        '- a',
        '&a [1]',
        '*a',
        '[',
        '{',
        ': :',
        '  - b',
        '!!str x',
      ),
      fc.constantFrom('|', '>-', '"', "'", '---', '...', '%YAML 1.1', '<<: *a', 'k: &x !!binary AA=='),
      fc.string({ unit: 'binary', maxLength: 20 }),
    ),
    { maxLength: 8 },
  )
  .map((lines) => lines.join('\n'));

const skillText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 120 }),
  fc
    .tuple(
      fc.constantFrom('', '\ufeff'),
      yamlish,
      fc.constantFrom('\n---\n', '\r\n---\r\n', '', '\n--- \nbody'),
    )
    .map(([bom, yaml, close]) => `${bom}---\n${yaml}${close}`),
);

function expectResultOrFrontmatterError(run: () => unknown): void {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(FrontmatterError);
  }
}

describe('frontmatter properties', () => {
  it('returns a document or throws a FrontmatterError for any text', () => {
    fc.assert(
      fc.property(skillText, fc.string({ maxLength: 10 }), (text, folder) => {
        expectResultOrFrontmatterError(() => {
          const doc = parseSkillMarkdown(text, folder);
          expect(typeof doc.name).toBe('string');
          expect(typeof doc.description).toBe('string');
        });
      }),
      { numRuns: 300 },
    );
  });

  it('returns a document or throws a FrontmatterError for any bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 120 }), (bytes) => {
        expectResultOrFrontmatterError(() => parseSkillMarkdown(bytes, 'x'));
      }),
      { numRuns: 300 },
    );
  });
});
