import { describe, expect, it } from 'vitest';
import { fromParts, snapshotDue, snapshotFormat, toParts } from './snapshots.js';
import { TimeSlicer } from './time-slice.js';

describe('the parts of a stored snapshot', () => {
  const value = () => {
    const wide = new Float64Array(1001).map((_, i) => i / 7);
    return {
      semantic: {
        names: Array.from({ length: 2503 }, (_, i) => `term-${i}\u0000${'é'.repeat(i % 5)}`),
        // A view into a larger buffer, at an offset that is no multiple of 8 bytes of the whole.
        terms: Uint32Array.from({ length: 3000 }, (_, i) => i * 2_654_435_761).subarray(3),
        weights: Uint8Array.from({ length: 5000 }, (_, i) => i % 251),
        about: Int32Array.from({ length: 777 }, (_, i) => -i),
        npmi: Float32Array.from({ length: 1500 }, (_, i) => Math.sin(i)),
        vectors: Int8Array.from({ length: 4097 }, (_, i) => (i % 255) - 127),
        levels: Int16Array.from({ length: 2049 }, (_, i) => ((i * 37) % 65_535) - 32_767),
        counts: Uint16Array.from({ length: 1025 }, (_, i) => (i * 97) % 65_536),
        wide,
        totalLength: 12_345.678_9,
        missing: null,
        extras: [null, ['a', 'b'], null],
      },
      entries: Array.from({ length: 1234 }, (_, i) => [
        `gh:o/r/s${i}`,
        i * 3,
        { hit: { stars: i }, text: 't' },
      ]),
      nextSlot: 3702,
    };
  };

  it('splits large arrays into parts of bounded size and puts them back as they were', async () => {
    const parts = await toParts(value(), new TimeSlicer(0), { bytes: 1000, items: 500 });
    expect(parts.length).toBeGreaterThan(40);
    // Every piece of a typed array holds at most the limit; the first part holds the rest.
    expect(Math.max(...parts.slice(1).map((p) => p.length))).toBeLessThan(40_000);
    const back = (await fromParts(parts, new TimeSlicer(0))) as ReturnType<typeof value>;
    expect(back).toEqual(value());
    expect(back.semantic.terms).toBeInstanceOf(Uint32Array);
    expect(back.semantic.wide).toBeInstanceOf(Float64Array);
    expect(back.semantic.levels).toBeInstanceOf(Int16Array);
    expect(back.semantic.counts).toBeInstanceOf(Uint16Array);
  });

  it('refuses to store an array of a kind it cannot split into pieces, however small', async () => {
    for (const a of [new BigInt64Array(100), new BigInt64Array(1), new Uint8ClampedArray(2)]) {
      await expect(toParts({ a }, new TimeSlicer(), { bytes: 10, items: 10 })).rejects.toThrow(
        `a snapshot cannot hold a ${a.constructor.name}`,
      );
    }
  });

  it('keeps small values in one part', async () => {
    const parts = await toParts({ a: new Int32Array(3), b: [1, 2] }, new TimeSlicer());
    expect(parts).toHaveLength(1);
    expect(await fromParts(parts, new TimeSlicer())).toEqual({ a: new Int32Array(3), b: [1, 2] });
  });

  it('names its layout, the Node major and a hash of the code it depends on', async () => {
    const suggest = await snapshotFormat(['suggest', 'search/hits']);
    expect(suggest).toMatch(/^\d+;node\d+;[0-9a-f]{24}$/);
    expect(await snapshotFormat(['suggest', 'search/hits'])).toBe(suggest);
    expect(await snapshotFormat(['search/memory', 'search/hits'])).not.toBe(suggest);
  });
});

describe('when a stored structure is stored again', () => {
  const hours = (n: number) => n * 3_600_000;
  it('after 6 hours when it took changes, after a day when it took none', () => {
    expect(snapshotDue(hours(5.9), true)).toBe(false);
    expect(snapshotDue(hours(6), true)).toBe(true);
    expect(snapshotDue(hours(23), false)).toBe(false);
    expect(snapshotDue(hours(24), false)).toBe(true);
    expect(snapshotDue(0, true, 0)).toBe(true);
    expect(snapshotDue(0, false, 0)).toBe(false);
  });
});
