import { describe, expect, it } from 'vitest';
import { editDistance, findLookalikes, skeleton } from './lookalike.js';

describe('editDistance', () => {
  it('counts insertions, deletions, substitutions and adjacent swaps', () => {
    expect(editDistance('acme/playbooks', 'acme/playbooks')).toBe(0);
    expect(editDistance('acme/playbooks', 'acme/playbook')).toBe(1);
    expect(editDistance('acme/playbooks', 'acme/plaubooks')).toBe(1);
    expect(editDistance('acme/playbooks', 'acme/plyabooks')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });

  it('stops early past the bound', () => {
    expect(editDistance('a'.repeat(50), 'b'.repeat(50), 2)).toBe(3);
  });
});

describe('findLookalikes', () => {
  const popular = [
    { namespace: 'anthropics', name: 'skills', popularity: 900 },
    { namespace: 'acme', name: 'playbooks', popularity: 10 },
    { namespace: 'ab', name: 'cd', popularity: 5 },
  ];

  it('flags typo-squats and confusable spellings of popular names', () => {
    expect(findLookalikes('anthropic/skills', popular).map((h) => h.fullName)).toEqual(['anthropics/skills']);
    expect(findLookalikes('acrne/playbooks', popular).map((h) => h.fullName)).toEqual(['acme/playbooks']);
    expect(skeleton('acrne/p1aybooks')).toBe(skeleton('acme/playbooks'));
  });

  it('leaves distinct names and very short names alone', () => {
    expect(findLookalikes('acme/runbooks', popular)).toEqual([]);
    expect(findLookalikes('ab/ce', popular)).toEqual([]);
    expect(findLookalikes('acme/playbooks', popular)).toEqual([]);
  });
});
