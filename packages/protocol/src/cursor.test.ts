import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from './cursor.js';
import { ProtocolError } from './errors.js';

describe('cursor', () => {
  it('round-trips and is URL safe', () => {
    const value = { score: 1.5, id: 'gh:o/r/技能?&=', n: 3 };
    const cursor = encodeCursor(value);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor)).toEqual(value);
  });

  it.each([
    [''],
    ['not base64!'],
    [encodeCursor({}).slice(0, 1)],
    [btoa('[1,2]')],
    [btoa('{"a":{"b":1}}').replace(/=+$/, '')],
    [btoa('{"a":null}').replace(/=+$/, '')],
    ['A'.repeat(2000)],
  ])('refuses %j with bad-cursor', (cursor) => {
    expect(() => decodeCursor(cursor)).toThrow(ProtocolError);
    expect(() => decodeCursor(cursor)).toThrow(/cursor is malformed/);
  });

  it('does not let a __proto__ key pollute the result', () => {
    const decoded = decodeCursor(btoa('{"__proto__":"x"}').replace(/=+$/, ''));
    expect(Object.getPrototypeOf(decoded)).toBe(Object.prototype);
    expect(Object.keys(decoded)).toEqual(['__proto__']);
  });
});
