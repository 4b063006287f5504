import { describe, expect, it } from 'vitest';
import { copyKey, withoutCopies } from './copies.js';

describe('copies of one skill', () => {
  it('are skills with the same name and description', () => {
    const pdf = { name: 'pdf', description: 'Fill and merge PDF forms.' };
    expect(copyKey({ ...pdf })).toBe(copyKey(pdf));
    expect(copyKey({ ...pdf, description: 'Fill PDF forms.' })).not.toBe(copyKey(pdf));
    expect(copyKey({ ...pdf, name: 'pdf-forms' })).not.toBe(copyKey(pdf));
    // The separator keeps a name's end from passing for the description's start.
    expect(copyKey({ name: 'a b', description: 'c' })).not.toBe(copyKey({ name: 'a', description: 'b c' }));
  });

  it('leave a ranking at the best-ranked copy of each skill, in order', () => {
    const ranked = [
      { identity: 'gh/a/x/pdf', key: 'pdf' },
      { identity: 'gh/b/y/docx', key: 'docx' },
      { identity: 'gh/c/z/pdf', key: 'pdf' },
      { identity: 'gh/d/w/xlsx', key: 'xlsx' },
      { identity: 'gh/e/v/docx', key: 'docx' },
    ];
    expect(withoutCopies(ranked, (c) => c.key).map((c) => c.identity)).toEqual([
      'gh/a/x/pdf',
      'gh/b/y/docx',
      'gh/d/w/xlsx',
    ]);
    expect(withoutCopies([], (c: { key: string }) => c.key)).toEqual([]);
  });
});
