import { describe, expect, it } from 'vitest';
import { renderResidentBlock, resolveResidentEntries } from './resident-block.js';

describe('renderResidentBlock', () => {
  it('renders one row per identity, first wins, no trailing newline', () => {
    expect(
      renderResidentBlock([
        { name: 'a', description: 'First\nline.', identity: 'x/a' },
        { name: 'dup', description: 'Ignored.', identity: 'x/a' },
        { name: 'b', description: 'Second.', identity: 'hub:t/b' },
      ]),
    ).toBe('- a: First line. (x/a)\n- b: Second. (hub:t/b)');
  });
});

describe('resolveResidentEntries', () => {
  it('hands back what has no usable local copy', () => {
    const skills = new Map([
      ['a', '---\nname: a\ndescription: A.\n---\n'],
      ['broken', 'no frontmatter'],
    ]);
    const result = resolveResidentEntries('a\nbroken\n@hub:t/c\n', skills);
    expect(result.entries).toEqual([{ name: 'a', description: 'A.', identity: 'a' }]);
    expect(result.unresolved.map((u) => [u.identity, u.line])).toEqual([
      ['broken', 2],
      ['hub:t/c', 3],
    ]);
    expect(result.unresolved[0]?.reason).toMatch(/SKILL.md/);
  });
});

describe('whole-directory cloud lines', () => {
  const skill = (name: string) => `---\nname: ${name}\ndescription: ${name.toUpperCase()}.\n---\n`;

  it('answer local first with the skills saved under the folder, deduplicated, negations applied', () => {
    const skills = new Map([
      ['hub/acme/playbooks/deploy', skill('deploy')],
      ['hub/acme/playbooks/rollback', skill('rollback')],
      ['hub/acme/playbooks/old', skill('old')],
      ['gh/o/r/dir/a', skill('a')],
    ]);
    const result = resolveResidentEntries(
      '@hub:acme/playbooks/rollback\n@acme/playbooks/\n!@hub:acme/playbooks/old\n@gh:o/r/dir/\n@gh:o/r/other/\n',
      skills,
    );
    expect(result.entries.map((e) => e.identity)).toEqual([
      'hub:acme/playbooks/rollback',
      'hub:acme/playbooks/deploy',
      'gh:o/r/dir/a',
    ]);
    expect(result.unresolved).toEqual([{ identity: 'gh:o/r/other', line: 5, reason: 'no local copy' }]);
  });
});
