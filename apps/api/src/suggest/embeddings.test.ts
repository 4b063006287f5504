import { describe, expect, it } from 'vitest';
import { VectorStore } from './embeddings.js';

/** A deterministic unit vector (a sine of the seed per coordinate). */
function unit(seed: number, dims: number): Float32Array {
  const v = Float32Array.from({ length: dims }, (_, i) => Math.sin(seed * 12.9898 + i * 78.233));
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

/** The nearest slots by brute force, one vector at a time (what the store must answer, to the last bit). */
function naive(
  held: Map<number, Float32Array>,
  q: Float32Array,
  depth: number,
  admit: (s: number) => boolean,
) {
  const all = [...held].map(([slot, v]) => {
    let dot = 0;
    for (let i = 0; i < v.length; i++) dot += v[i]! * q[i]!;
    return { slot, score: dot };
  });
  return all
    .filter((h) => admit(h.slot))
    .sort((a, b) => b.score - a.score || a.slot - b.slot)
    .slice(0, depth);
}

describe('VectorStore', () => {
  it('answers as a brute-force scan does, through removals, replacements and reused rows', () => {
    const dims = 24;
    const store = new VectorStore();
    const held = new Map<number, Float32Array>();
    const put = (slot: number, seed: number) => {
      const v = unit(seed, dims);
      store.set(slot, v);
      held.set(slot, v);
    };
    for (let slot = 0; slot < 203; slot++) put(slot, slot);
    for (let slot = 0; slot < 203; slot += 3) {
      store.delete(slot);
      held.delete(slot);
    }
    for (let slot = 300; slot < 340; slot++) put(slot, slot * 7);
    put(5, 999);
    expect(store.size).toBe(held.size);
    expect(store.has(3)).toBe(false);
    expect(store.has(5)).toBe(true);
    const odd = (slot: number) => slot % 2 === 1;
    for (const seed of [1, 42, 777]) {
      const q = unit(seed + 0.5, dims);
      expect(store.nearest(q, 10, () => true)).toEqual(naive(held, q, 10, () => true));
      expect(store.nearest(q, 25, odd)).toEqual(naive(held, q, 25, odd));
    }
  });

  it('refuses a vector of other dimensions and finds nothing for a query of other dimensions', () => {
    const store = new VectorStore();
    store.set(0, unit(1, 8));
    expect(() => store.set(1, unit(2, 4))).toThrow(/4 dimensions, the store holds 8/);
    expect(store.nearest(unit(3, 4), 5, () => true)).toEqual([]);
    expect(new VectorStore().nearest(unit(3, 4), 5, () => true)).toEqual([]);
  });
});
