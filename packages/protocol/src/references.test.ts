import { describe, expect, it } from 'vitest';
import { IdentityError } from './errors.js';
import { extractReferences, formatReference, parseReference, scanReferences } from './references.js';

describe('scanReferences', () => {
  it('reports good and bad references side by side with their offsets', () => {
    const message = 'try @skills:a/b then @skills:gh:o//r and @skills:hub:t/c:save.';
    const scanned = scanReferences(message);
    expect(scanned.map((s) => s.ok)).toEqual([true, false, true]);
    const [first, bad, last] = scanned;
    expect(first?.ok && message.slice(first.ref.start, first.ref.end)).toBe('@skills:a/b');
    expect(!bad?.ok && bad?.error.code).toBe('empty-segment');
    expect(!bad?.ok && bad?.raw).toBe('@skills:gh:o//r');
    expect(last?.ok && last.ref).toMatchObject({
      identity: 'hub:t/c',
      save: true,
      raw: '@skills:hub:t/c:save',
    });
  });

  it('stops at any whitespace, including ideographic spaces', () => {
    expect(extractReferences('@skills:a/b\u3000next').map((r) => r.identity)).toEqual(['a/b']);
  });

  it('throws the first bad reference as an IdentityError', () => {
    expect(() => extractReferences('@skills:a/b @skills:x:bogus')).toThrow(IdentityError);
  });
});

describe('formatReference', () => {
  it('escapes spaces, colons and a trailing punctuation mark so the reference reads back', () => {
    expect(formatReference({ identity: 'gh:o/r/my skill', save: true })).toBe(
      '@skills:gh:o/r/my%20skill:save',
    );
    expect(formatReference({ identity: 'gh:o/r/a:b' })).toBe('@skills:gh:o/r/a%3Ab');
    const dotted = formatReference({ identity: 'gh:o/r/v1.' });
    expect(dotted).toBe('@skills:gh:o/r/v1%2E');
    expect(extractReferences(`see ${dotted}.`)[0]?.identity).toBe('gh:o/r/v1.');
  });

  it('writes both suffixes and parses them back', () => {
    const text = formatReference({ identity: 'hub:t/c', save: true, install: true });
    expect(parseReference(text)).toMatchObject({ identity: 'hub:t/c', save: true, install: true });
  });

  it('keeps a bare path named like a prefix a bare path', () => {
    const text = formatReference({ identity: 'gh', save: true });
    expect(parseReference(text)).toMatchObject({ source: 'local', path: 'gh', save: true });
  });
});
