import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { KERNELS, renderKernel } from '../../../../scripts/generate-wasm.js';
import { dots } from './dots.js';
import { Int8DotKernel } from './int8-dots.js';
import { VectorRows } from './vector-rows.js';

let seed = 7;
const random = () => {
  seed = (seed * 1103515245 + 12345) >>> 0;
  return seed / 2 ** 32;
};
const unitQuery = (dims: number) => {
  const q = Float32Array.from({ length: dims }, () => random() - 0.5);
  const norm = Math.hypot(...q);
  return q.map((x) => x / norm);
};

describe('Int8DotKernel', () => {
  it('the committed kernel bytes are what int8-dots.wat compiles to (run `npm run wasm` to refresh them)', async () => {
    for (const kernel of KERNELS) {
      expect(await readFile(kernel.module, 'utf8')).toBe(await renderKernel(kernel));
    }
  });

  it('gives the dot products of the JavaScript loop within 1e-3 of a cosine, over several chunks of rows', () => {
    const dims = 128;
    const kernel = new Int8DotKernel();
    const rows = new VectorRows(dims, 0, kernel.storage);
    const slots = 10_000;
    for (let s = 0; s < slots; s++)
      rows.set(
        s,
        Int8Array.from({ length: dims }, () => Math.round(random() * 254 - 127)),
      );
    const q = unitQuery(dims);
    // More rows than one chunk of the kernel's scratch (4,096), in any order, some twice.
    const count = 9_001;
    const bases = Int32Array.from({ length: count }, () => rows.row(Math.floor(random() * slots)) * dims);
    const simd = new Float64Array(count);
    const plain = new Float64Array(count);
    kernel.dots(rows.values, bases, count, q, simd);
    dots(rows.values, bases, count, q, plain);
    for (let k = 0; k < count; k++) expect(Math.abs(simd[k]! - plain[k]!) / 127).toBeLessThan(1e-3);
    // Copies of one row tie exactly (integer sums).
    const twice = Int32Array.from([bases[0]!, bases[0]!]);
    const tied = new Float64Array(2);
    kernel.dots(rows.values, twice, 2, q, tied);
    expect(tied[0]).toBe(tied[1]);
  });

  it('keeps rows in place as its memory grows, and answers 0 for a zero query', () => {
    const dims = 16;
    const kernel = new Int8DotKernel();
    const rows = new VectorRows(dims, 0, kernel.storage);
    const first = Int8Array.from({ length: dims }, (_, j) => j - 8);
    rows.set(0, first);
    // Past the first page of rows: the memory grows and every view of it is made again.
    for (let s = 1; s < 20_000; s++) rows.set(s, new Int8Array(dims).fill(s % 100));
    expect([...rows.get(0)!]).toEqual([...first]);
    // Counted once: the rows by VectorRows, the scratch page and the last page's rest by the kernel.
    expect(kernel.bytes()).toBeGreaterThanOrEqual(65_536);
    expect(kernel.bytes() + rows.values.byteLength).toBe(
      Math.ceil((65_536 + rows.values.byteLength) / 65_536) * 65_536,
    );
    const q = new Float32Array(dims);
    q[15] = 1;
    const out = new Float64Array(2);
    kernel.dots(rows.values, Int32Array.from([0, rows.row(19_999) * dims]), 2, q, out);
    expect(out[0]).toBeCloseTo(7, 3);
    expect(out[1]).toBeCloseTo(99, 3);
    kernel.dots(rows.values, Int32Array.from([0]), 1, new Float32Array(dims), out);
    expect(out[0]).toBe(0);
  });

  it('leaves rows held elsewhere, or of a length SIMD does not take, to the JavaScript loop', () => {
    const kernel = new Int8DotKernel();
    const elsewhere = Int8Array.from({ length: 24 }, (_, j) => j);
    const q = Float32Array.from({ length: 12 }, (_, j) => j / 10);
    const out = new Float64Array(2);
    const expected = new Float64Array(2);
    kernel.dots(elsewhere, Int32Array.from([0, 12]), 2, q, out);
    dots(elsewhere, Int32Array.from([0, 12]), 2, q, expected);
    expect([...out]).toEqual([...expected]);
  });
});
