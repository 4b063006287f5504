import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { lookup, type TreeEntry } from '../leaf-rule.js';

const dir =
  process.env.ATSKILLS_CONFORMANCE_DIR ??
  path.resolve(import.meta.dirname, '../../../../..', 'shared', 'conformance');

interface LeafRuleCase {
  tree?: string[];
  generate?: { folders: Record<string, number> };
  at: string;
  skill?: boolean;
  menu?: string[];
  menu_count?: number;
  refused?: { skills: number; subcollections: { path: string; skills: number }[] };
}

const vectors = JSON.parse(readFileSync(path.join(dir, 'leaf-rule.json'), 'utf8')) as {
  cases: LeafRuleCase[];
};

/** Turns a vector's tree (regular files, 'link -> target' symlinks, or generated folders) into a listing. */
function listing(c: LeafRuleCase): TreeEntry[] {
  const entries: TreeEntry[] = (c.tree ?? []).map((line) => {
    const arrow = line.indexOf(' -> ');
    return arrow < 0 ? { path: line, type: 'file' } : { path: line.slice(0, arrow), type: 'symlink' };
  });
  for (const [folder, count] of Object.entries(c.generate?.folders ?? {})) {
    for (let i = 1; i <= count; i++) {
      entries.push({ path: `${folder}/s${String(i).padStart(4, '0')}/SKILL.md`, type: 'file' });
    }
  }
  return entries;
}

describe('conformance: leaf-rule.json', () => {
  it('has vectors', () => expect(vectors.cases.length).toBeGreaterThan(0));

  it.each(vectors.cases.map((c, i) => [i, c.at, c] as const))('case %i at %j', (_i, _at, c) => {
    const result = lookup(listing(c), c.at);
    if (c.skill) expect(result).toEqual({ kind: 'skill', path: c.at });
    else if (c.menu) expect(result).toEqual({ kind: 'menu', path: c.at, skills: c.menu });
    else if (c.menu_count !== undefined) {
      expect(result.kind).toBe('menu');
      expect(result.kind === 'menu' && result.skills.length).toBe(c.menu_count);
    } else if (c.refused) {
      expect(result).toEqual({
        kind: 'refused',
        path: c.at,
        count: c.refused.skills,
        subcollections: c.refused.subcollections,
      });
    } else throw new Error('vector without an expectation');
  });
});
