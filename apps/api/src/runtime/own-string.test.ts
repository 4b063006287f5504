import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { ownString } from './own-string.js';

setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;

/** Heap bytes still in use, after a collection, once a 60 MB body is dropped and only `keep(body)` is held. */
function heldAfterDroppingBody(keep: (body: string) => string): { kept: string; bytes: number } {
  gc();
  const before = process.memoryUsage().heapUsed;
  let body: string | null = `# A heading long enough to be a view\n${'lorem ipsum '.repeat(5_000_000)}`;
  const kept = keep(body);
  body = null;
  gc();
  return { kept, bytes: process.memoryUsage().heapUsed - before };
}

describe('ownString', () => {
  it('keeps every code unit, lone surrogates and escapes included', () => {
    const texts = [
      '',
      'short',
      'a heading long enough to be a view',
      '\ud800 lone surrogate "quoted"\n\\',
      'é ü 漢字 🙂',
    ];
    for (const text of texts) expect(ownString(text)).toBe(text);
  });

  it('does not keep the text it was cut from alive, where a substring does', () => {
    const view = heldAfterDroppingBody((body) => body.slice(2, 36));
    const own = heldAfterDroppingBody((body) => ownString(body.slice(2, 36)));
    expect(view.kept).toBe('A heading long enough to be a view');
    expect(own.kept).toBe(view.kept);
    // The premise: a substring holds its 60 MB parent.
    expect(view.bytes).toBeGreaterThan(50e6);
    expect(own.bytes).toBeLessThan(5e6);
  });
});
