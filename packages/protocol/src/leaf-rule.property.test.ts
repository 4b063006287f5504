import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  findSkillFolders,
  lookup,
  MAX_SUBCOLLECTIONS,
  parseLsTree,
  skillFilesOf,
  type TreeEntry,
} from './leaf-rule.js';

const segment = fc.constantFrom('a', 'b', 'c', '.git', '.github', 'skills', 'SKILL.md', 'skill.md', 'x');
const entry: fc.Arbitrary<TreeEntry> = fc.record({
  path: fc.array(segment, { minLength: 1, maxLength: 5 }).map((s) => s.join('/')),
  type: fc.constantFrom('file', 'file', 'file', 'dir', 'symlink', 'submodule', 'other'),
});

describe('leaf rule properties', () => {
  it('finds only real, non-nested skills outside .git and links', () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 30 }), fc.array(segment, { maxLength: 3 }), (tree, at) => {
        const skills = findSkillFolders(tree);
        const files = new Set(tree.filter((e) => e.type === 'file').map((e) => e.path));
        for (const skill of skills) {
          expect(files.has(skill === '' ? 'SKILL.md' : `${skill}/SKILL.md`)).toBe(true);
          expect(skill.split('/')).not.toContain('.git');
          expect(
            skills.some((other) => other !== skill && (other === '' || skill.startsWith(`${other}/`))),
          ).toBe(false);
        }
        expect([...skills].sort()).toEqual(skills);

        const cap = 2;
        const result = lookup(tree, at.join('/'), cap);
        // The walk never descends into a skill: nothing beneath one resolves as a skill or menu of its own.
        if (result.kind !== 'not-found') {
          const path = at.join('/');
          expect(skills.some((s) => s !== path && (s === '' || path.startsWith(`${s}/`)))).toBe(false);
        }
        if (result.kind === 'menu') expect(result.skills.length).toBeLessThanOrEqual(cap);
        if (result.kind === 'refused') {
          expect(result.count).toBeGreaterThan(cap);
          expect(result.subcollections.length).toBeLessThanOrEqual(MAX_SUBCOLLECTIONS);
          for (const sub of result.subcollections) expect(sub.skills).toBeLessThanOrEqual(cap);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('gives each skill the files under its folder, none in .git or behind a link, in one pass', () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 30 }), fc.array(segment, { maxLength: 3 }), (tree, extra) => {
        const folders = [...findSkillFolders(tree), extra.join('/')];
        const links = tree.filter((e) => e.type === 'symlink' || e.type === 'submodule').map((e) => e.path);
        const filesOf = skillFilesOf(tree, folders);
        for (const folder of folders) {
          // What skillFiles read a folder at a time, entry by entry.
          const expected = tree
            .filter(
              (e) =>
                e.type === 'file' &&
                e.path !== folder &&
                (folder === '' || e.path.startsWith(`${folder}/`)) &&
                !e.path.split('/').includes('.git') &&
                !links.some((link) => e.path.startsWith(`${link}/`)),
            )
            .map((e) => e.path)
            .sort();
          expect(
            filesOf
              .get(folder)!
              .map((e) => e.path)
              .sort(),
          ).toEqual(expected);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('parses any ls-tree output without throwing', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (text) => {
        for (const e of parseLsTree(text)) expect(typeof e.path).toBe('string');
      }),
      { numRuns: 200 },
    );
  });
});
