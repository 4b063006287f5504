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
    const skill = (identity: string, name: string, description = `About ${name}.`) => ({
      identity,
      name,
      description,
    });
    const ranked = [
      skill('gh/a/x/pdf', 'pdf'),
      skill('gh/b/y/docx', 'docx'),
      skill('gh/c/z/pdf', 'pdf'),
      // Same name, another description: another skill.
      skill('gh/f/u/pdf', 'pdf', 'Sign PDF files.'),
      skill('gh/d/w/xlsx', 'xlsx'),
      skill('gh/e/v/docx', 'docx'),
    ];
    expect(withoutCopies(ranked, (c) => c).map((c) => c.identity)).toEqual([
      'gh/a/x/pdf',
      'gh/b/y/docx',
      'gh/f/u/pdf',
      'gh/d/w/xlsx',
    ]);
    expect(withoutCopies([], (c: { name: string; description: string }) => c)).toEqual([]);
  });
});
