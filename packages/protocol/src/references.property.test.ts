import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IdentityError } from './errors.js';
import { expectSafeIdentity, identityText } from './identity.test-support.js';
import { extractReferences, formatReference, parseReference, scanReferences } from './references.js';

const suffixes = fc.constantFrom(
  '',
  ':save',
  ':install',
  ':save:install',
  ':install:save',
  ':save:save',
  ':x',
  ':',
);
const message = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc
    .array(
      fc.oneof(
        fc.tuple(fc.constantFrom('@skills:', ' @skills:', '(@skills:', 'a@skills:'), identityText, suffixes),
        fc.tuple(
          fc.constant(''),
          fc.string({ unit: 'grapheme', maxLength: 8 }),
          fc.constantFrom('', '.', ')', ' '),
        ),
      ),
      { maxLength: 4 },
    )
    .map((parts) => parts.map((p) => p.join('')).join(' ')),
);

describe('reference properties', () => {
  it('scanReferences never throws; extractReferences throws only IdentityError', () => {
    fc.assert(
      fc.property(message, (text) => {
        const scanned = scanReferences(text);
        for (const item of scanned) {
          if (item.ok) {
            expectSafeIdentity(item.ref);
            expect(text.slice(item.ref.start, item.ref.end)).toBe(item.ref.raw);
          } else expect(item.error).toBeInstanceOf(IdentityError);
        }
        try {
          expect(extractReferences(text)).toHaveLength(scanned.length);
        } catch (error) {
          expect(error).toBeInstanceOf(IdentityError);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('formatReference(parse(x)) parses back to an equal reference, also inside a sentence', () => {
    fc.assert(
      fc.property(message, fc.constantFrom('.', ')', '。', '', ','), (text, punctuation) => {
        for (const item of scanReferences(text)) {
          if (!item.ok) continue;
          const formatted = formatReference(item.ref);
          const again = parseReference(formatted);
          expect({ identity: again.identity, save: again.save, install: again.install }).toEqual({
            identity: item.ref.identity,
            save: item.ref.save,
            install: item.ref.install,
          });
          const [inSentence] = extractReferences(`see ${formatted}${punctuation} next`);
          expect(inSentence?.identity).toBe(item.ref.identity);
          expect(inSentence?.raw).toBe(formatted);
        }
      }),
      { numRuns: 400 },
    );
  });
});
