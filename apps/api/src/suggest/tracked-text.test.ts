import { describe, expect, it } from 'vitest';
import { joinTracked, replaceTracked, sliceTracked, splitTracked, tracked } from './tracked-text.js';

/** The message characters each character of a tracked text came from. */
const origins = (message: string, t: { text: string; at: Int32Array }) =>
  [...t.at].map((i) => message[i]).join('');

describe('tracked text', () => {
  const message = 'see `x` in CLAUDE.md, https://a.b/c then go';

  it('replaces as String.prototype.replace does, keeping where kept characters came from', () => {
    let t = tracked(message);
    t = replaceTracked(t, /`[^`]*`/g, (code) => code.slice(1, -1));
    t = replaceTracked(t, /\bhttps:\/\/\S+/g, () => ' ');
    t = replaceTracked(t, /\.md\b/g, () => '');
    expect(t.text).toBe(
      message
        .replace(/`[^`]*`/g, (c) => c.slice(1, -1))
        .replace(/\bhttps:\/\/\S+/g, ' ')
        .replace(/\.md\b/g, ''),
    );
    expect(t.text).toBe('see x in CLAUDE,   then go');
    // Kept characters point at themselves in the message; the space that stands for the URL at its start.
    expect(origins(message, t)).toBe('see x in CLAUDE, h then go');
    expect(replaceTracked(t, /nothing/g, () => '')).toBe(t);
  });

  it('splits and joins as strings do, each piece keeping its origins', () => {
    const t = tracked('one. two; three');
    const pieces = splitTracked(t, /[.;]\s+/g);
    expect(pieces.map((p) => p.text)).toEqual('one. two; three'.split(/[.;]\s+/));
    expect(pieces.map((p) => [...p.at])).toEqual([
      [0, 1, 2],
      [5, 6, 7],
      [10, 11, 12, 13, 14],
    ]);
    const joined = joinTracked([pieces[0]!, pieces[2]!], ' ');
    expect(joined.text).toBe('one three');
    expect([...joined.at]).toEqual([0, 1, 2, 2, 10, 11, 12, 13, 14]);
    expect(sliceTracked(joined, 4, 9).text).toBe('three');
    expect(splitTracked(tracked(''), /x/g).map((p) => p.text)).toEqual(['']);
  });
});
