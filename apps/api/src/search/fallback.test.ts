import { describe, expect, it } from 'vitest';
import type { SearchEngine } from './engine.js';
import { createFallbackEngine } from './fallback.js';

/** An in-memory engine standing in for one side of the wrapper (the wrapper's logic is what is tested). */
function engine(name: string) {
  const state = { up: true, rebuilds: 0, indexed: [] as string[] };
  const fail = () => {
    throw Object.assign(new Error(`${name} unreachable`), { code: 'ECONNREFUSED' });
  };
  const impl: SearchEngine & { rebuild(): Promise<{ documents: number }> } = {
    name,
    async search() {
      if (!state.up) fail();
      return { hits: [], nextCursor: 'next', engine: { name } };
    },
    async index(ids) {
      if (!state.up) fail();
      state.indexed.push(...ids);
    },
    async remove() {
      if (!state.up) fail();
    },
    async health() {
      return state.up ? { ok: true } : { ok: false, detail: 'down' };
    },
    async rebuild() {
      if (!state.up) fail();
      state.rebuilds++;
      return { documents: 1 };
    },
  };
  return { impl, state };
}

const scope = { isAdmin: false, readableNamespaces: [] };

describe('fallback search engine', () => {
  it('answers from the fallback while the primary is down, and rebuilds the primary when it returns', async () => {
    const primary = engine('meilisearch');
    const fallback = engine('postgres');
    const wrapped = createFallbackEngine(primary.impl, fallback.impl);

    expect((await wrapped.search('q', {}, scope, 20, undefined)).engine).toEqual({ name: 'meilisearch' });
    primary.state.up = false;
    const during = await wrapped.search('q', {}, scope, 20, undefined);
    expect(during.engine).toEqual({ name: 'postgres', fallback: 'outage' });
    expect(during.nextCursor).toBe('f.next');
    // A write the primary misses while down does not fail the writer; the rebuild repairs it.
    await expect(wrapped.index(['gh:o/r/a'])).resolves.toBeUndefined();

    primary.state.up = true;
    // The first search after the return still comes from the fallback and starts the rebuild.
    expect((await wrapped.search('q', {}, scope, 20, undefined)).engine).toEqual({
      name: 'postgres',
      fallback: 'outage',
    });
    for (let i = 0; i < 50 && primary.state.rebuilds === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(primary.state.rebuilds).toBe(1);
    expect((await wrapped.search('q', {}, scope, 20, undefined)).engine).toEqual({ name: 'meilisearch' });
  });

  it('keeps a fallback cursor on the fallback', async () => {
    const primary = engine('meilisearch');
    const fallback = engine('postgres');
    const wrapped = createFallbackEngine(primary.impl, fallback.impl);
    const page = await wrapped.search('q', {}, scope, 20, 'f.abc');
    expect(page.engine).toEqual({ name: 'postgres', fallback: 'outage' });
  });
});
