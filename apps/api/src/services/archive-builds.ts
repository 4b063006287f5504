import { LRUCache } from 'lru-cache';
import type { SkillArchive } from './archive.js';
import { ConcurrencyGate, type GateLimits } from './concurrency-gate.js';

/** Bounds of archive building (settings ARCHIVE_BUILDS and ARCHIVE_CACHE_MB): builds at once, and waiting. */
export interface ArchiveBuildLimits extends GateLimits {
  /** Bytes of built archives kept; 0 keeps none. */
  cacheBytes: number;
}

/** Seconds an archive client is told to wait when builds are saturated. */
export const ARCHIVE_RETRY_AFTER_SECONDS = 2;

/**
 * Built archives per revision, and a bound on building them. An archive is a pure function of its revision
 * (deterministic tar, fixed gzip level), so it is built once and served from memory until evicted; the
 * same archive asked for while it is being built waits for that build. At most `concurrent` builds run;
 * a few more requests wait briefly, and the rest get `503 unavailable` with Retry-After at once, so a burst
 * of large downloads costs bounded CPU and memory and never the other routes.
 */
export class ArchiveBuilds {
  readonly counters = { hits: 0, builds: 0 };
  readonly #cache: LRUCache<string, SkillArchive> | undefined;
  readonly #inFlight = new Map<string, Promise<SkillArchive>>();
  readonly #gate: ConcurrencyGate;

  constructor(readonly limits: ArchiveBuildLimits) {
    this.#gate = new ConcurrencyGate(limits, {
      detail: 'Archive builds are saturated; retry shortly (other routes are unaffected).',
      retryAfterSeconds: ARCHIVE_RETRY_AFTER_SECONDS,
    });
    this.#cache =
      limits.cacheBytes > 0
        ? new LRUCache<string, SkillArchive>({
            maxSize: limits.cacheBytes,
            sizeCalculation: (a) => Math.max(1, a.bytes.length),
          })
        : undefined;
  }

  /** The archive of `key` (identity and revision), from memory or built by `build` within the bounds. */
  async get(key: string, build: () => Promise<SkillArchive>): Promise<SkillArchive> {
    const cached = this.#cache?.get(key);
    if (cached) {
      this.counters.hits++;
      return cached;
    }
    const pending = this.#inFlight.get(key);
    if (pending) return pending;
    const started = this.#run(key, build);
    this.#inFlight.set(key, started);
    try {
      return await started;
    } finally {
      this.#inFlight.delete(key);
    }
  }

  /** Requests refused while builds were saturated. */
  get shed(): number {
    return this.#gate.shed;
  }

  #run(key: string, build: () => Promise<SkillArchive>): Promise<SkillArchive> {
    return this.#gate.run(async () => {
      this.counters.builds++;
      const archive = await build();
      // An archive larger than a quarter of the cache would only push everything else out.
      if (this.#cache && archive.bytes.length <= this.limits.cacheBytes / 4) this.#cache.set(key, archive);
      return archive;
    });
  }
}
