import type { IndexChangeEvent, ReadScope } from '@atskills/db';
import { LRUCache } from 'lru-cache';

/** A search page as sent: the serialized body and the X-Search-Engine header it was sent with. */
export interface CachedSearchPage {
  body: string;
  engine: string;
}

/** The current revision of a live skill, as the If-None-Match and HEAD fast paths need it. */
export interface CachedRevision {
  revision: string;
  flagRules: string[];
}

/** Hit and miss counts, for /metrics. */
export interface ReadCacheCounters {
  hits: number;
  misses: number;
  flushes: number;
}

/**
 * Answers of the hub's hottest reads (search pages, live revisions) kept in process, and dropped whenever
 * the index changes. Correctness rests on the change feed (Postgres NOTIFY from a trigger on `skills`, see
 * migration 0006): while the feed is down nothing is served from here, and a read that started before a
 * change is never stored after it (the generation it started under no longer matches).
 */
export class ReadCache {
  readonly counters: ReadCacheCounters = { hits: 0, misses: 0, flushes: 0 };
  #generation = 0;
  #live = false;
  #confirmedAt = 0;
  #leaseMs = Number.POSITIVE_INFINITY;
  readonly #pages: LRUCache<string, CachedSearchPage>;
  readonly #revisions: LRUCache<string, CachedRevision>;

  /** `budgetBytes` bounds the memory held (three quarters for search pages); 0 turns the cache off. */
  constructor(readonly budgetBytes: number) {
    const pageBytes = Math.max(1, Math.floor((budgetBytes * 3) / 4));
    this.#pages = new LRUCache({ maxSize: pageBytes, sizeCalculation: (v, k) => v.body.length + k.length });
    this.#revisions = new LRUCache({
      maxSize: Math.max(1, budgetBytes - pageBytes),
      sizeCalculation: (v, k) => 64 + k.length + v.revision.length,
    });
  }

  /**
   * Whether answers may be served and stored now: the feed is up and was heard from within its lease (a
   * database that hangs sends no error, only silence; past the lease, reads go to it and meet its 503).
   */
  get enabled(): boolean {
    return this.#live && this.budgetBytes > 0 && Date.now() - this.#confirmedAt <= this.#leaseMs;
  }

  /** How long the feed may stay silent before nothing is served from here (ms; null: it cannot). */
  set leaseMs(ms: number | null) {
    this.#leaseMs = ms ?? Number.POSITIVE_INFINITY;
  }

  /** The generation a read starts under; pass it back to `put…` so a read that raced a change is not kept. */
  get generation(): number {
    return this.#generation;
  }

  /** Feeds a change-feed event in. */
  onIndexEvent(event: IndexChangeEvent): void {
    this.#live = event !== 'lost';
    this.#confirmedAt = Date.now();
    if (event !== 'alive') this.flush();
  }

  /** Drops everything (the index changed, or this process wrote to it). */
  flush(): void {
    this.#generation++;
    this.counters.flushes++;
    this.#pages.clear();
    this.#revisions.clear();
  }

  /** A cached search page, if any. */
  getSearchPage(key: string): CachedSearchPage | undefined {
    return this.#count(this.enabled ? this.#pages.get(key) : undefined);
  }

  /** Keeps a search page read under `generation`. */
  putSearchPage(key: string, page: CachedSearchPage, generation: number): void {
    if (this.enabled && generation === this.#generation) this.#pages.set(key, page);
  }

  /** A cached live revision, if any. */
  getRevision(key: string): CachedRevision | undefined {
    return this.#count(this.enabled ? this.#revisions.get(key) : undefined);
  }

  /** Keeps a live revision read under `generation`. */
  putRevision(key: string, revision: CachedRevision, generation: number): void {
    if (this.enabled && generation === this.#generation) this.#revisions.set(key, revision);
  }

  #count<T>(value: T | undefined): T | undefined {
    if (value === undefined) this.counters.misses++;
    else this.counters.hits++;
    return value;
  }
}

/** The part of a cache key that says what the caller may read (private rows differ per scope). */
export function scopeKey(scope: ReadScope): string {
  if (scope.isAdmin) return '*';
  return [...scope.readableNamespaces]
    .map((n) => n.toLowerCase())
    .sort()
    .join(',');
}

/** A cache key from its parts; JSON keeps it unambiguous whatever characters a query holds. */
export function cacheKey(...parts: (string | number | undefined)[]): string {
  return JSON.stringify(parts);
}
