import { describe, expect, it } from 'vitest';
import { ifNoneMatchHits } from './caching.js';

describe('ifNoneMatchHits', () => {
  it('matches a strong tag, a weak tag, a list member and *', () => {
    expect(ifNoneMatchHits('"abc"', 'abc')).toBe(true);
    expect(ifNoneMatchHits('W/"abc"', 'abc')).toBe(true);
    expect(ifNoneMatchHits('"x", W/"y" ,"abc"', 'abc')).toBe(true);
    expect(ifNoneMatchHits(['"x"', '"abc"'], 'abc')).toBe(true);
    expect(ifNoneMatchHits(' * ', 'abc')).toBe(true);
  });

  it('does not match other tags, unquoted values or nothing', () => {
    expect(ifNoneMatchHits(undefined, 'abc')).toBe(false);
    expect(ifNoneMatchHits('"abcd"', 'abc')).toBe(false);
    expect(ifNoneMatchHits('abc', 'abc')).toBe(false);
    expect(ifNoneMatchHits('', 'abc')).toBe(false);
  });
});
