import { describe, expect, it } from 'vitest';
import { type SearchPageFn, splitSearch } from './search-split.js';

/** A search over `files` (repository, size) with GitHub's cap, paging and optional timeouts. */
function fakeGithub(
  files: { repo: string; size: number }[],
  cap: number,
  incompleteOnce = new Set<string>(),
) {
  const calls: string[] = [];
  const search: SearchPageFn = async (q, page, perPage) => {
    calls.push(`${q}#${page}`);
    const range = /size:(\S+)/.exec(q)?.[1] ?? '';
    const match = (size: number) => {
      if (range === '') return true;
      if (range.startsWith('>')) return size > Number(range.slice(1));
      const [lo, hi = lo] = range.split('..').map(Number);
      return size >= lo! && size <= hi!;
    };
    const all = files.filter((f) => match(f.size));
    if ((page - 1) * perPage >= cap) throw new Error('422 beyond the cap');
    const slice = all.slice((page - 1) * perPage, Math.min(page * perPage, cap));
    const incomplete = incompleteOnce.delete(`${q}#${page}`);
    const shown = incomplete ? slice.slice(0, 1) : slice;
    return { total: all.length, incomplete, names: shown.map((f) => f.repo), count: shown.length };
  };
  return { search, calls };
}

describe('splitSearch', () => {
  const files = Array.from({ length: 2500 }, (_, i) => ({ repo: `o/r${i}`, size: (i * 37) % 5000 }));

  it('reaches every result of a query larger than the cap, each part under it', async () => {
    const { search } = fakeGithub(files, 100);
    const naive = await search('filename:SKILL.md', 1, 100);
    expect(naive.total).toBe(2500);
    const result = await splitSearch(search, 'filename:SKILL.md', {
      qualifier: 'size',
      min: 0,
      max: 10_000,
      cap: 100,
      perPage: 30,
    });
    expect(result.names.size).toBe(2500);
    expect(result.truncated).toEqual([]);
    expect(result.parts.length).toBeGreaterThanOrEqual(25);
  });

  it('splits a part whose answer was incomplete instead of trusting it', async () => {
    const { search } = fakeGithub(files, 1000, new Set(['filename:SKILL.md size:0..10000#1']));
    const result = await splitSearch(search, 'filename:SKILL.md', {
      qualifier: 'size',
      min: 0,
      max: 10_000,
      cap: 1000,
    });
    expect(result.names.size).toBe(2500);
  });

  it('says which single-value part stayed over the cap', async () => {
    const same = Array.from({ length: 150 }, (_, i) => ({ repo: `o/s${i}`, size: 42 }));
    const { search } = fakeGithub(same, 100);
    const result = await splitSearch(search, 'filename:SKILL.md', {
      qualifier: 'size',
      min: 0,
      max: 100,
      cap: 100,
    });
    expect(result.truncated).toEqual(['filename:SKILL.md size:42']);
    expect(result.names.size).toBe(100);
  });
});
