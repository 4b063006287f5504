import { describe, expect, it } from 'vitest';
import { FrontmatterError } from './errors.js';
import { parseSkillMarkdown, strictProblems, tryParseSkillMarkdown } from './frontmatter.js';

function codeOf(content: string | Uint8Array): string | undefined {
  const result = tryParseSkillMarkdown(content, 'x');
  return result.ok ? undefined : result.error.code;
}

describe('parseSkillMarkdown', () => {
  it('keeps other keys and returns the body after the closing line', () => {
    const doc = parseSkillMarkdown(
      '---\nname: pdf\ndescription: Fill forms.\nlicense: MIT\nmetadata:\n  version: 2\n---\n# PDF\n\nBody.\n',
      'skills/pdf',
    );
    expect(doc.frontmatter).toEqual({
      name: 'pdf',
      description: 'Fill forms.',
      license: 'MIT',
      metadata: { version: 2 },
    });
    expect(doc.body).toBe('# PDF\n\nBody.\n');
    expect(doc.warnings).toEqual([]);
    expect(strictProblems(doc)).toEqual([]);
  });

  it('decodes bytes, dropping a BOM, and refuses invalid UTF-8', () => {
    const bytes = new TextEncoder().encode('\ufeff---\nname: x\ndescription: d\n---\n');
    expect(parseSkillMarkdown(bytes, 'x').name).toBe('x');
    expect(codeOf(new Uint8Array([0x2d, 0x2d, 0x2d, 0x0a, 0xff, 0xfe]))).toBe('not-utf8');
  });

  it('warns on empty values and lets publishing reject them', () => {
    const doc = parseSkillMarkdown('---\nname: ""\ndescription: "  "\n---\n', 'x');
    expect(doc.warnings.sort()).toEqual(['description-empty', 'name-empty', 'name-folder-mismatch']);
    expect(strictProblems(doc)).toContain('name-empty');
  });

  it('treats a null name or description as missing and a list description as not a string', () => {
    expect(codeOf('---\nname:\ndescription: d\n---\n')).toBe('missing-name');
    expect(codeOf('---\n---\n')).toBe('missing-name');
    expect(codeOf('---\nname: x\ndescription: [a]\n---\n')).toBe('description-not-string');
    expect(codeOf('---\njust a string\n---\n')).toBe('not-a-mapping');
    expect(codeOf('---\nname: x\nname: y\ndescription: d\n---\n')).toBe('invalid-yaml');
    expect(codeOf('---')).toBe('unterminated-frontmatter');
  });

  it('defends against alias bombs, deep nesting and oversized input', () => {
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
      'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
      'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
      'name: x',
      'description: d',
    ].join('\n');
    expect(codeOf(`---\n${bomb}\n---\n`)).toBe('too-many-aliases');
    expect(codeOf(`---\nname: x\ndescription: d\ndeep: ${'['.repeat(40)}${']'.repeat(40)}\n---\n`)).toBe(
      'too-deep',
    );
    expect(codeOf(`---\nname: x\ndescription: ${'d'.repeat(70_000)}\n---\n`)).toBe('too-large');
    expect(codeOf(`---\nname: x\n${'['.repeat(60_000)}\n---\n`)).toMatch(/too-deep|invalid-yaml/);
  });

  it('only ever throws FrontmatterError', () => {
    expect(() => parseSkillMarkdown('nothing', 'x')).toThrow(FrontmatterError);
  });
});
