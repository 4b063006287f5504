import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { IdentityError } from '../errors.js';
import { extractReferences, formatReference } from '../references.js';

const dir =
  process.env.ATSKILLS_CONFORMANCE_DIR ??
  path.resolve(import.meta.dirname, '../../../../..', 'shared', 'conformance');

interface ReferencesVectors {
  cases: {
    message: string;
    error?: string;
    refs?: {
      identity: string;
      source: string;
      path: string;
      save: boolean;
      install: boolean;
      disk: string;
    }[];
  }[];
}

const vectors = JSON.parse(readFileSync(path.join(dir, 'references.json'), 'utf8')) as ReferencesVectors;

describe('conformance: references.json', () => {
  it('has vectors', () => expect(vectors.cases.length).toBeGreaterThan(0));

  it.each(vectors.cases.map((c) => [c.message, c] as const))('%j', (_message, c) => {
    if (c.error !== undefined) {
      let thrown: unknown;
      try {
        extractReferences(c.message);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(IdentityError);
      expect((thrown as IdentityError).code).toBe(c.error);
      return;
    }
    const refs = extractReferences(c.message);
    expect(
      refs.map(({ identity, source, path, save, install, disk }) => ({
        identity,
        source,
        path,
        save,
        install,
        disk,
      })),
    ).toEqual(c.refs);
    for (const ref of refs) {
      // Every parsed reference formats back into a reference that parses to the same thing.
      const [again] = extractReferences(formatReference(ref));
      expect(again?.identity).toBe(ref.identity);
      expect(again?.save).toBe(ref.save);
      expect(again?.install).toBe(ref.install);
    }
  });
});
