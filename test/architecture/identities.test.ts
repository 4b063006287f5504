import { describe, expect, it } from 'vitest';
import { regexesOf, sourceFiles, templatesOf } from './source-files.js';

// A regex over identity prefixes (`gh:`, `hub:`, `(gh|hub)%3A`) outside the protocol re-implements the protocol's
// identity rules, and drifts from them: apps parse and format identities through @atskills/protocol
// (parseIdentity, parseGithubRepository, splitIdentityPrefix, formatIdentity).
const IDENTITY_PREFIX_REGEX = /\b(?:gh|hub)\b[^/]{0,12}?(?::|%3A)/i;

/**
 * A template literal that builds an identity by hand (`hub:${ns}/${name}`, `/s/gh:${path}`): a piece ends
 * with the prefix right before a substitution, and no piece holds whitespace (a sentence that names an
 * identity, `No linked collection hub:${team}/${name}.`, is prose, not an identity a program reads).
 */
function buildsIdentity(pieces: string[]): boolean {
  return (
    pieces.every((piece) => !/\s/.test(piece)) &&
    pieces.slice(0, -1).some((piece) => /(?:^|[^a-z0-9])(?:gh|hub):$/i.test(piece))
  );
}

/** Identities built by template where the protocol cannot be imported, each with its reason. */
const TEMPLATE_EXCEPTIONS = new Set([
  // The context a link token is sealed under; github-auth depends on no workspace package, and the string
  // must never change (tokens sealed under it would no longer open).
  'packages/github-auth/src/link-credential.ts',
]);

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

  it('no app (nor package but the protocol) builds a gh:/hub: identity by template', () => {
    const files = [...sourceFiles('apps'), ...sourceFiles('packages')].filter(
      (file) => !file.startsWith('packages/protocol/') && !TEMPLATE_EXCEPTIONS.has(file),
    );
    const offenders = files.flatMap((file) =>
      templatesOf(file)
        .filter((t) => buildsIdentity(t.pieces))
        .map((t) => `${file}:${t.line} ${t.text}`),
    );
    expect(offenders).toEqual([]);
  });

  it('the template check tells built identities from prose', () => {
    // Pieces as templatesOf gives them: `hub:${ns}/${name}` is ['hub:', '/', ''].
    expect(buildsIdentity(['hub:', '/', ''])).toBe(true);
    expect(buildsIdentity(['gh:', ''])).toBe(true);
    expect(buildsIdentity(['/s/gh:', ''])).toBe(true);
    expect(buildsIdentity(['No linked collection hub:', '/', '.'])).toBe(false);
    expect(buildsIdentity(['', ':', ''])).toBe(false);
    expect(buildsIdentity(['github:', ''])).toBe(false);
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
