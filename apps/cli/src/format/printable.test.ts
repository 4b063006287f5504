import { describe, expect, it } from 'vitest';
import { oneLine, oneLineWithinBytes, withoutControls } from './printable.js';

describe('printable text', () => {
  it('takes out C0 and C1 controls and the bidi controls, line breaks becoming spaces', () => {
    expect(withoutControls('a\u001b[2J\u001b]0;pwned\u0007b')).toBe('a[2J]0;pwnedb');
    expect(withoutControls('a\u009b\u0085b\u202ec\u202c\u2066d\u2069\u007f')).toBe('a bcd');
    expect(withoutControls('line\nnext\ttab\r\n')).toBe('line next tab  ');
  });

  it('makes one line, cut with an ellipsis, never inside a surrogate pair', () => {
    expect(oneLine('  two\n\nlines  ')).toBe('two lines');
    expect(oneLine('abcdef', 4)).toBe('abc…');
    expect(oneLine('ab😀cd', 4)).toBe('ab…');
    expect(oneLine('ab😀cd', 5)).toBe('ab😀…');
  });

  it('cuts to a budget of UTF-8 bytes between code points', () => {
    expect(oneLineWithinBytes('short', 10)).toBe('short');
    // 'ロ' and 'ー' are 3 bytes each; the ellipsis takes 3.
    expect(oneLineWithinBytes('ローールバック', 10)).toBe('ロー…');
    expect(Buffer.byteLength(oneLineWithinBytes('😀'.repeat(20), 10))).toBeLessThanOrEqual(10);
    expect(oneLineWithinBytes('😀'.repeat(20), 10)).toBe('😀…');
  });
});
