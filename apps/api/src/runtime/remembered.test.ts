import { describe, expect, it } from 'vitest';
import { remembered } from './remembered.js';

describe('remembered', () => {
  it('computes each key once, undefined answers too, and starts over when full', () => {
    const asked: string[] = [];
    const lookup = remembered((key) => {
      asked.push(key);
      return key === 'none' ? undefined : key.toUpperCase();
    }, 3);
    expect([lookup('a'), lookup('a'), lookup('none'), lookup('none')]).toEqual([
      'A',
      'A',
      undefined,
      undefined,
    ]);
    expect(asked).toEqual(['a', 'none']);
    lookup('b');
    lookup('c'); // the fourth key: the memory starts over with it
    lookup('a');
    expect(asked).toEqual(['a', 'none', 'b', 'c', 'a']);
    lookup('c');
    expect(asked).toHaveLength(5);
  });
});
