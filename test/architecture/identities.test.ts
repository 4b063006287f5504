import { describe, expect, it } from 'vitest';
import { regexesOf, sourceFiles } from './source-files.js';

// A regex over identity prefixes (`gh:`, `hub:`, `(gh|hub)%3A`) outside the protocol re-implements the protocol's
// identity rules, and drifts from them: apps parse and format identities through @atskills/protocol
// (parseIdentity, parseGithubRepository, splitIdentityPrefix, formatIdentity).
const IDENTITY_PREFIX_REGEX = /\b(?:gh|hub)\b[^/]{0,12}?(?::|%3A)/i;

describe('identities go through the protocol', () => {
  it('no app (nor package but the protocol) holds a gh:/hub: identity regex', () => {
    const files = [...sourceFiles('apps'), ...sourceFiles('packages')].filter(
      (file) => !file.startsWith('packages/protocol/'),
    );
    const offenders = files.flatMap((file) =>
      regexesOf(file)
        .filter((r) => IDENTITY_PREFIX_REGEX.test(r.text))
        .map((r) => `${file}:${r.line} ${r.text}`),
    );
    expect(offenders).toEqual([]);
  });

  it('the check recognizes the shapes it forbids', () => {
    for (const text of ['/^gh:/i', '/^(gh|hub)(:|%3A)/i', '/^(gh|hub)%3A/i', "'^hub:'"]) {
      expect(IDENTITY_PREFIX_REGEX.test(text), text).toBe(true);
    }
    for (const text of ['/^https?:\\/\\//i', '/github\\.com/', '/^org:[a-z]+$/']) {
      expect(IDENTITY_PREFIX_REGEX.test(text), text).toBe(false);
    }
  });
});
