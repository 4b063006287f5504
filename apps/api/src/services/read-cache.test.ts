import { afterEach, describe, expect, it, vi } from 'vitest';
import { cacheKey, ReadCache, scopeKey } from './read-cache.js';

const page = (body: string) => ({ body, engine: 'postgres' });

afterEach(() => {
  vi.useRealTimers();
});

describe('ReadCache', () => {
  it('serves nothing before its change feed is live, nor after it is lost', () => {
    const cache = new ReadCache(1 << 20);
    cache.putSearchPage('k', page('[]'), cache.generation);
    expect(cache.getSearchPage('k')).toBeUndefined();

    cache.onIndexEvent('live');
    cache.putSearchPage('k', page('[1]'), cache.generation);
    expect(cache.getSearchPage('k')?.body).toBe('[1]');

    cache.onIndexEvent('lost');
    expect(cache.enabled).toBe(false);
    expect(cache.getSearchPage('k')).toBeUndefined();
    cache.onIndexEvent('live');
    expect(cache.getSearchPage('k')).toBeUndefined(); // what was missed while down is not trusted
  });

  it('never keeps a read that started before a change', () => {
    const cache = new ReadCache(1 << 20);
    cache.onIndexEvent('live');
    const startedUnder = cache.generation;
    cache.onIndexEvent('change'); // the index changed while the read was running
    cache.putRevision('gh:o/r/s', { revision: 'old', flagRules: [] }, startedUnder);
    expect(cache.getRevision('gh:o/r/s')).toBeUndefined();
    cache.putRevision('gh:o/r/s', { revision: 'new', flagRules: [] }, cache.generation);
    expect(cache.getRevision('gh:o/r/s')?.revision).toBe('new');
  });

  it('stops serving when the feed stays silent past its lease, and resumes on a heartbeat without a flush', () => {
    vi.useFakeTimers();
    const cache = new ReadCache(1 << 20);
    cache.onIndexEvent('live');
    cache.leaseMs = 3_000;
    cache.putSearchPage('k', page('[1]'), cache.generation);
    vi.advanceTimersByTime(2_999);
    expect(cache.getSearchPage('k')?.body).toBe('[1]');
    vi.advanceTimersByTime(2);
    expect(cache.getSearchPage('k')).toBeUndefined();
    cache.onIndexEvent('alive'); // the heartbeat came back: nothing was missed
    expect(cache.getSearchPage('k')?.body).toBe('[1]');
  });

  it('is off with a zero budget, and evicts the least recently used pages past its budget', () => {
    const off = new ReadCache(0);
    off.onIndexEvent('live');
    expect(off.enabled).toBe(false);

    const small = new ReadCache(400); // 300 bytes for pages
    small.onIndexEvent('live');
    for (const k of ['a', 'b', 'c']) small.putSearchPage(k, page('x'.repeat(120)), small.generation);
    expect(small.getSearchPage('a')).toBeUndefined();
    expect(small.getSearchPage('c')?.body).toHaveLength(120);
    expect(small.counters).toMatchObject({ hits: 1, misses: 1 });
  });

  it('keys scopes by what they may read, in any order, and keeps keys unambiguous', () => {
    expect(scopeKey({ isAdmin: false, readableNamespaces: ['B', 'a'] })).toBe(
      scopeKey({ isAdmin: false, readableNamespaces: ['a', 'b'] }),
    );
    expect(scopeKey({ isAdmin: true, readableNamespaces: [] })).not.toBe(
      scopeKey({ isAdmin: false, readableNamespaces: [] }),
    );
    // A query holding the separator of a naive join cannot pose as another query's key.
    expect(cacheKey('', 'a\u0000b', 20)).not.toBe(cacheKey('', 'a', 'b', 20));
    expect(cacheKey('', 'x', undefined)).not.toBe(cacheKey('', 'x', ''));
  });
});
