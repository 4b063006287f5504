import fc from 'fast-check';
import { expect } from 'vitest';
import { diskPath, type Identity } from './identity.js';

// Shared by the property tests of identities and references; not a test file itself, so importing it does
// not register tests twice. Excluded from the build (tsconfig.build.json).

/** Path-shaped text built from the pieces that matter to the parser, plus arbitrary Unicode. */
export const identityText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc
    .tuple(
      fc.constantFrom('', 'gh:', 'hub:', 'GH:', 'ftp:', 'https://github.com/', 'http://x.org/', ':'),
      fc.array(
        fc.oneof(
          fc.constantFrom(
            '',
            '.',
            '..',
            '%2E%2E',
            '%2F',
            '%5C',
            '%25',
            '%3A',
            '%zz',
            '%',
            'a\\b',
            '\u0000',
            '\t',
          ),
          fc.constantFrom(
            'o',
            'Owner',
            'repo',
            '.claude',
            '@scope',
            '技能',
            'my skill',
            'tree',
            'blob',
            'SKILL.md',
          ),
          fc.string({ unit: 'grapheme', maxLength: 6 }),
        ),
        { maxLength: 6 },
      ),
      fc.constantFrom('', '/', '//', ':save', '?q#f'),
    )
    .map(([prefix, segments, tail]) => `${prefix}${segments.join('/')}${tail}`),
);

/** Asserts the invariants any accepted identity holds. */
export function expectSafeIdentity(id: Identity): void {
  const segments = id.path.split('/');
  expect(id.path.startsWith('/')).toBe(false);
  expect(id.path.includes('\\')).toBe(false);
  expect(id.path.includes('%')).toBe(false);
  expect(/[\u0000-\u001f\u007f-\u009f]/.test(id.path)).toBe(false);
  expect(segments.every((s) => s !== '' && s !== '.' && s !== '..')).toBe(true);
  expect(diskPath(id).split('/').includes('..')).toBe(false);
  if (id.source !== 'local') expect(segments.length).toBeGreaterThanOrEqual(2);
}
