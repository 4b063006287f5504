import { describe, expect, it } from 'vitest';
import { ProtocolError } from './errors.js';
import { formatSourceStamp, parseSourceStamp } from './source-stamp.js';

describe('source stamp', () => {
  it('formats two lines and parses them back', () => {
    const stamp = { identity: 'gh:o/r/p', date: '2026-01-31', revision: 'abc123' };
    const text = formatSourceStamp(stamp);
    expect(text).toBe('gh:o/r/p\n2026-01-31 rev:abc123\n');
    expect(parseSourceStamp(text)).toEqual(stamp);
    expect(parseSourceStamp('hub:T/C\r\n2026-01-31 rev:r1\r\n\r\n')).toEqual({
      identity: 'hub:t/c',
      date: '2026-01-31',
      revision: 'r1',
    });
  });

  it.each([
    ['gh:o/r\n'],
    ['gh:o\n2026-01-31 rev:x\n'],
    ['gh:o/r\n2026-02-30 rev:x\n'],
    ['gh:o/r\n2026-01-31 x\n'],
    ['gh:o/r\n2026-01-31 rev:x\nextra\n'],
  ])('refuses %j with bad-source-stamp', (text) => {
    expect(() => parseSourceStamp(text)).toThrow(ProtocolError);
    try {
      parseSourceStamp(text);
    } catch (error) {
      expect((error as ProtocolError).code).toBe('bad-source-stamp');
    }
  });
});
