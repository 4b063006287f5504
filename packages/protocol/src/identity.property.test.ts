import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IdentityError } from './errors.js';
import { type Identity, normalizeIdentity, parseIdentity } from './identity.js';
import { expectSafeIdentity, identityText } from './identity.test-support.js';

// Hostile-input properties: every input either parses to a safe identity or fails with an IdentityError.

function parseOrError(text: string): Identity | IdentityError {
  try {
    return parseIdentity(text);
  } catch (error) {
    if (error instanceof IdentityError) return error;
    throw error;
  }
}

describe('identity properties', () => {
  it('returns a safe identity or throws an IdentityError, nothing else', () => {
    fc.assert(
      fc.property(identityText, (text) => {
        const result = parseOrError(text);
        if (!(result instanceof IdentityError)) expectSafeIdentity(result);
      }),
      { numRuns: 400 },
    );
  });

  it('normalizeIdentity is idempotent and the canonical text parses to the same identity', () => {
    fc.assert(
      fc.property(identityText, (text) => {
        const first = parseOrError(text);
        if (first instanceof IdentityError) return;
        expect(normalizeIdentity(first.identity)).toBe(first.identity);
        expect(parseIdentity(first.identity)).toEqual(first);
      }),
      { numRuns: 400 },
    );
  });
});
