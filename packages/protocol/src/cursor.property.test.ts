import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from './cursor.js';
import { ProtocolError } from './errors.js';

describe('cursor properties', () => {
  it('decodes anything to a cursor or a bad-cursor error', () => {
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 60 }),
      fc.string({ unit: fc.constantFrom(...'ABCabc012-_=+/'), maxLength: 40 }),
      fc.json().map((json) => btoa(unescape(encodeURIComponent(json))).replace(/=+$/, '')),
    );
    fc.assert(
      fc.property(text, (cursor) => {
        try {
          const value = decodeCursor(cursor);
          for (const v of Object.values(value)) expect(['string', 'number']).toContain(typeof v);
        } catch (error) {
          expect(error).toBeInstanceOf(ProtocolError);
          expect((error as ProtocolError).code).toBe('bad-cursor');
        }
      }),
      { numRuns: 300 },
    );
  });

  it('round-trips flat objects', () => {
    const value = fc.dictionary(
      fc.string({ maxLength: 8 }),
      fc.oneof(
        fc.string({ unit: 'grapheme', maxLength: 10 }),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
      ),
      { maxKeys: 5 },
    );
    fc.assert(
      fc.property(value, (obj) => {
        expect(decodeCursor(encodeCursor(obj))).toEqual(JSON.parse(JSON.stringify(obj)));
      }),
      { numRuns: 200 },
    );
  });
});
