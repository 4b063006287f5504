import { describe, expect, it } from 'vitest';
import {
  caseWarnings,
  findSkillFolders,
  lookup,
  parseLsTree,
  skillFiles,
  type TreeEntry,
} from './leaf-rule.js';

const files = (...paths: string[]): TreeEntry[] => paths.map((path) => ({ path, type: 'file' }));

describe('lookup', () => {
  it('answers not-found for paths that are not folders of the listing', () => {
    const tree = [...files('a/SKILL.md', 'README.md'), { path: 'link', type: 'symlink' } as TreeEntry];
    expect(lookup(tree, 'missing')).toEqual({ kind: 'not-found', path: 'missing' });
    expect(lookup(tree, 'README.md')).toEqual({ kind: 'not-found', path: 'README.md' });
    expect(lookup(tree, 'link')).toEqual({ kind: 'not-found', path: 'link' });
    expect(lookup(tree, '.git')).toEqual({ kind: 'not-found', path: '.git' });
  });

  it('treats an existing folder without skills as an empty menu', () => {
    const tree: TreeEntry[] = [{ path: 'docs', type: 'dir' }, ...files('docs/x.md')];
    expect(lookup(tree, 'docs/')).toEqual({ kind: 'menu', path: 'docs', skills: [] });
  });

  it('answers not-found for a path inside a skill: a nested SKILL.md and a plain sub-folder belong to it', () => {
    const tree = files(
      'skills/b/SKILL.md',
      'skills/b/inner/SKILL.md',
      'skills/b/scripts/run.sh',
      'c/SKILL.md',
    );
    expect(lookup(tree, 'skills/b/inner')).toEqual({ kind: 'not-found', path: 'skills/b/inner' });
    expect(lookup(tree, 'skills/b/scripts')).toEqual({ kind: 'not-found', path: 'skills/b/scripts' });
    expect(lookup(tree, 'skills/b')).toEqual({ kind: 'skill', path: 'skills/b' });
    expect(lookup(tree, 'skills')).toEqual({ kind: 'menu', path: 'skills', skills: ['skills/b'] });
    // A repository whose root is a skill: everything beneath it is part of it.
    const rootSkill = files('SKILL.md', 'sub/SKILL.md', 'docs/a.md');
    expect(lookup(rootSkill, 'sub')).toEqual({ kind: 'not-found', path: 'sub' });
    expect(lookup(rootSkill, 'docs')).toEqual({ kind: 'not-found', path: 'docs' });
    // A SKILL.md behind a symlink makes no skill, so the folders under the link's parent stay menus.
    const linked: TreeEntry[] = [{ path: 'l', type: 'symlink' }, ...files('l/SKILL.md', 'l/x/SKILL.md')];
    expect(lookup(linked, 'l/x').kind).not.toBe('not-found');
  });

  it('refuses over a custom cap with the sub-collections that fit', () => {
    const tree = files('c/x/1/SKILL.md', 'c/x/2/SKILL.md', 'c/y/1/SKILL.md');
    expect(lookup(tree, 'c', 2)).toEqual({
      kind: 'refused',
      path: 'c',
      count: 3,
      subcollections: [
        { path: 'c/x', skills: 2 },
        { path: 'c/y', skills: 1 },
      ],
    });
  });
});

describe('findSkillFolders', () => {
  it('walks from the given folder, stops at skills and never follows links or submodules', () => {
    const tree: TreeEntry[] = [
      ...files('s/a/SKILL.md', 's/a/inner/SKILL.md', 's/b/SKILL.md', 's/l/x/SKILL.md', 'm/sub/SKILL.md'),
      { path: 's/l', type: 'symlink' },
      { path: 'm', type: 'submodule' },
    ];
    expect(findSkillFolders(tree)).toEqual(['s/a', 's/b']);
    expect(findSkillFolders(tree, 's/a/inner')).toEqual(['s/a/inner']);
  });
});

describe('skillFiles', () => {
  it('lists the regular files of a skill, nested bundles included, no .git or links', () => {
    const tree: TreeEntry[] = [
      ...files('s/a/SKILL.md', 's/a/scripts/run.sh', 's/a/inner/SKILL.md', 's/a/.git/HEAD', 's/ab/SKILL.md'),
      { path: 's/a/link', type: 'symlink' },
    ];
    expect(skillFiles(tree, 's/a').map((e) => e.path)).toEqual([
      's/a/SKILL.md',
      's/a/inner/SKILL.md',
      's/a/scripts/run.sh',
    ]);
  });
});

describe('caseWarnings', () => {
  it('flags folders with only a wrong-case skill.md', () => {
    expect(caseWarnings(files('a/skill.md', 'b/Skill.MD', 'b/SKILL.md', 'c/SKILL.md'))).toEqual(['a']);
  });
});

describe('parseLsTree', () => {
  it('parses -z output with and without --long', () => {
    const sha = 'a'.repeat(40);
    const out =
      `100644 blob ${sha}     120\tskills/a/SKILL.md\0` +
      `120000 blob ${sha}      10\tskills/link\0` +
      `160000 commit ${sha}       -\tvendor/sub\0` +
      `040000 tree ${sha}       -\tskills\0` +
      `100755 blob ${sha}\tname with\ttab.sh\0`;
    expect(parseLsTree(out)).toEqual([
      { path: 'skills/a/SKILL.md', type: 'file', sha, mode: '100644', size: 120 },
      { path: 'skills/link', type: 'symlink', sha, mode: '120000', size: 10 },
      { path: 'vendor/sub', type: 'submodule', sha, mode: '160000' },
      { path: 'skills', type: 'dir', sha, mode: '040000' },
      { path: 'name with\ttab.sh', type: 'file', sha, mode: '100755' },
    ]);
  });
});
