import { describe, expect, it } from 'vitest';
import {
  addAutotriggerLine,
  expandAutotrigger,
  identityOfLocalFolder,
  parseAutotrigger,
  removeAutotriggerLine,
  trimAutotriggerLine,
} from './autotrigger.js';

describe('parseAutotrigger', () => {
  it('classifies lines and reports bad cloud identities with their line', () => {
    const { rules, warnings } = parseAutotrigger(
      '# c\r\n\r\nteam/*\r\n!@gh:o/r/p\r\n@acme/x\r\n@gh:-bad/r\r\n!\n',
    );
    expect(rules).toEqual([
      { line: 3, text: 'team/*', negated: false, kind: 'local', pattern: 'team/*' },
      {
        line: 4,
        text: '!@gh:o/r/p',
        negated: true,
        kind: 'cloud',
        pattern: '@gh:o/r/p',
        identity: 'gh:o/r/p',
      },
      { line: 5, text: '@acme/x', negated: false, kind: 'cloud', pattern: '@acme/x', identity: 'hub:acme/x' },
    ]);
    expect(warnings.map((w) => w.line)).toEqual([6, 7]);
    expect(warnings[0]?.message).toContain('bad-owner');
  });
});

describe('trimAutotriggerLine', () => {
  it('drops trailing blanks as gitignore does, keeping a space escaped as `\\ `', () => {
    expect(trimAutotriggerLine('  team/a \t\r')).toBe('team/a');
    expect(trimAutotriggerLine('/trail\\ ')).toBe('/trail\\ ');
    expect(trimAutotriggerLine('/trail\\   ')).toBe('/trail\\ ');
    expect(trimAutotriggerLine('/trail\\\\ ')).toBe('/trail\\\\');
    expect(trimAutotriggerLine('\uFEFF@hub:a/b')).toBe('@hub:a/b');
    const { rules } = parseAutotrigger('/trail\\ \r\nx\\\\ \n');
    expect(rules.map((r) => r.pattern)).toEqual(['/trail\\ ', 'x\\\\']);
  });
});

describe('expandAutotrigger', () => {
  it('gives saved copies their cloud identity and dedupes against cloud lines', () => {
    const { entries } = expandAutotrigger('gh/\n@gh:o/r/p\n@hub:t/c\n', ['gh/o/r/p', 'gh/o/r/q']);
    expect(entries).toEqual([
      { identity: 'gh:o/r/p', line: 1 },
      { identity: 'gh:o/r/q', line: 1 },
      { identity: 'hub:t/c', line: 3 },
    ]);
  });

  it('lets the last cloud line for an identity decide', () => {
    expect(expandAutotrigger('@hub:t/c\n!@hub:t/c\n', []).entries).toEqual([]);
    expect(expandAutotrigger('!@hub:t/c\n@hub:t/c\n', []).entries).toEqual([
      { identity: 'hub:t/c', line: 2 },
    ]);
  });

  it('warns about a line that selects nothing', () => {
    const { entries, warnings } = expandAutotrigger('missing/*\na\n', ['a']);
    expect(entries).toEqual([{ identity: 'a', line: 2 }]);
    expect(warnings).toEqual([
      { line: 1, text: 'missing/*', message: '"missing/*" selects no skill in .atskills.' },
    ]);
  });
});

describe('identityOfLocalFolder', () => {
  it('maps folders to the identity they answer', () => {
    expect(identityOfLocalFolder('gh/o/r')).toBe('gh:o/r');
    expect(identityOfLocalFolder('hub/Acme/x')).toBe('hub:acme/x');
    expect(identityOfLocalFolder('gh/o')).toBe('gh/o');
    expect(identityOfLocalFolder('team/my skill')).toBe('team/my skill');
    expect(identityOfLocalFolder('team/100%')).toBeUndefined();
  });
});

describe('add/remove lines', () => {
  it('installs exactly one line, idempotently, recognizing equivalent cloud spellings', () => {
    const once = addAutotriggerLine('# mine\nteam/a', '@hub:acme/x');
    expect(once).toBe('# mine\nteam/a\n@hub:acme/x\n');
    expect(addAutotriggerLine(once, '@acme/x')).toBe(once);
    expect(addAutotriggerLine('', 'team/b')).toBe('team/b\n');
    expect(addAutotriggerLine('a\r\n', 'b')).toBe('a\r\nb\r\n');
  });

  it('uninstalls exactly that line and leaves the rest untouched', () => {
    const content = '# keep\n@hub:acme/x\nteam/a\n!@hub:acme/x\n';
    const removed = removeAutotriggerLine(content, '@acme/x');
    expect(removed).toBe('# keep\nteam/a\n!@hub:acme/x\n');
    expect(removeAutotriggerLine(removed, '@acme/x')).toBe(removed);
    expect(removeAutotriggerLine('a\nb', 'b')).toBe('a\n');
  });
});

describe('whole-directory cloud lines', () => {
  it('parse with their trailing slash and stay apart from the line of the folder itself', () => {
    const { rules } = parseAutotrigger('@hub:acme/playbooks/\n@gh:o/r/dir\n');
    expect(rules[0]).toMatchObject({ identity: 'hub:acme/playbooks', directory: true });
    expect(rules[1]).not.toHaveProperty('directory');
    const { entries, excluded } = expandAutotrigger(
      '@acme/playbooks/\n@hub:acme/playbooks\n@hub:acme/playbooks/\n!@hub:acme/playbooks/x\n',
      [],
    );
    expect(entries).toEqual([
      { identity: 'hub:acme/playbooks', line: 1, directory: true },
      { identity: 'hub:acme/playbooks', line: 2 },
    ]);
    expect(excluded).toEqual(['hub:acme/playbooks/x']);
    const once = addAutotriggerLine('@hub:acme/playbooks\n', '@hub:acme/playbooks/');
    expect(once).toBe('@hub:acme/playbooks\n@hub:acme/playbooks/\n');
    expect(addAutotriggerLine(once, '@acme/playbooks/')).toBe(once);
    expect(removeAutotriggerLine(once, '@hub:acme/playbooks/')).toBe('@hub:acme/playbooks\n');
  });
});
