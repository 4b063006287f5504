import { describe, expect, it } from 'vitest';
import { type CopyFacts, copyGroups, copyKey, shownCopy } from './copies.js';

interface Candidate extends CopyFacts {
  identity: string;
}

const skill = (identity: string, name: string, more: Partial<CopyFacts> = {}): Candidate => ({
  identity,
  name,
  description: `About ${name}.`,
  stars: 0,
  flags: [],
  ...more,
});
const identities = (list: readonly Candidate[]) => list.map((c) => c.identity);

describe('copies of one skill', () => {
  it('are skills with the same name and description', () => {
    const pdf = { name: 'pdf', description: 'Fill and merge PDF forms.' };
    expect(copyKey({ ...pdf })).toBe(copyKey(pdf));
    expect(copyKey({ ...pdf, description: 'Fill PDF forms.' })).not.toBe(copyKey(pdf));
    expect(copyKey({ ...pdf, name: 'pdf-forms' })).not.toBe(copyKey(pdf));
    // The separator keeps a name's end from passing for the description's start.
    expect(copyKey({ name: 'a b', description: 'c' })).not.toBe(copyKey({ name: 'a', description: 'b c' }));
  });

  it('group a ranking by skill, in the order of each skill’s best copy', () => {
    const ranked = [
      skill('gh/a/x/pdf', 'pdf'),
      skill('gh/b/y/docx', 'docx'),
      skill('gh/c/z/pdf', 'pdf'),
      // Same name, another description: another skill.
      skill('gh/f/u/pdf', 'pdf', { description: 'Sign PDF files.' }),
      skill('gh/d/w/xlsx', 'xlsx'),
      skill('gh/e/v/docx', 'docx'),
    ];
    expect(copyGroups(ranked, (c) => c).map(identities)).toEqual([
      ['gh/a/x/pdf', 'gh/c/z/pdf'],
      ['gh/b/y/docx', 'gh/e/v/docx'],
      ['gh/f/u/pdf'],
      ['gh/d/w/xlsx'],
    ]);
    expect(copyGroups([], (c: Candidate) => c)).toEqual([]);
  });

  it('group exactly the skills copyKey (what the benchmark counts recall by) calls copies', () => {
    const names = ['pdf', 'pdf\u0000x', 'docx', ''];
    const descriptions = ['About pdf.', 'x\u0000About pdf.', '', 'Sign.'];
    const ranked = names.flatMap((name, i) =>
      descriptions.map((description, j) => skill(`gh/r${i}/s${j}/a`, name, { description })),
    );
    const twice = [...ranked, ...ranked.map((c) => ({ ...c, identity: `${c.identity}-copy` }))];
    const byKey = new Map<string, string[]>();
    for (const c of twice) byKey.set(copyKey(c), [...(byKey.get(copyKey(c)) ?? []), c.identity]);
    expect(copyGroups(twice, (c) => c).map(identities)).toEqual([...byKey.values()]);
  });

  it('are shown as the copy with the fewest open flags, then the most stars, then the best ranked', () => {
    const fork = skill('gh:fork/skills/pdf', 'pdf', { stars: 2 });
    const original = skill('gh:acme/skills/pdf', 'pdf', { stars: 900 });
    const mirror = skill('gh:mirror/skills/pdf', 'pdf', { stars: 900 });
    expect(shownCopy([fork, original, mirror], (c) => c)).toBe(original);
    expect(shownCopy([fork], (c) => c)).toBe(fork);
    // A copy that added something a scanner flags never hides a clean one, however starred.
    const flagged = { ...original, flags: [{}] };
    expect(shownCopy([flagged, fork], (c) => c)).toBe(fork);
    // A flag a dispute suppressed is no flag.
    const cleared = { ...original, flags: [{ suppressedBy: 7 }] };
    expect(shownCopy([fork, cleared], (c) => c)).toBe(cleared);
    // All flagged alike: stars decide.
    expect(shownCopy([{ ...fork, flags: [{}] }, flagged], (c) => c)).toBe(flagged);
  });
});
