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
