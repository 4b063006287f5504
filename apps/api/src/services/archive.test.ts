import { describe, expect, it } from 'vitest';
import { checkFilePath } from './archive.js';

describe('checkFilePath', () => {
  it('accepts relative paths inside the skill, any characters in segments', () => {
    for (const p of [
      'SKILL.md',
      'scripts/run.sh',
      '.claude/notes.md',
      'ドキュメント/a b.md',
      '@scope/x..y',
    ]) {
      expect(checkFilePath(p)).toBe(p);
    }
  });

  it('refuses anything that could leave the folder with 400 bad-path', () => {
    for (const p of ['../x', 'a/../../x', './x', 'a//b', '/etc/passwd', 'a\\b', 'a\u0000b', 'a/', '']) {
      expect(() => checkFilePath(p), p).toThrow(expect.objectContaining({ status: 400, code: 'bad-path' }));
    }
  });
});
