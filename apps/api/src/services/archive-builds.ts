import { LRUCache } from 'lru-cache';
import { problem } from '../problems.js';
import type { SkillArchive } from './archive.js';

/** Bounds of archive building (settings ARCHIVE_BUILDS and ARCHIVE_CACHE_MB). */
export interface ArchiveBuildLimits {
  /** Builds running at once. */
  concurrent: number;
  /** Bytes of built archives kept; 0 keeps none. */
  cacheBytes: number;
  /** Requests that may wait for a build slot; past it, 503 at once. */
  maxWaiting?: number;
  /** How long a request waits for a slot before it gets 503. */
  maxWaitMs?: number;
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
  readonly counters = { hits: 0, builds: 0, shed: 0 };
  readonly #cache: LRUCache<string, SkillArchive> | undefined;
  readonly #inFlight = new Map<string, Promise<SkillArchive>>();
  readonly #waiting: (() => void)[] = [];
  #running = 0;
  readonly #maxWaiting: number;
  readonly #maxWaitMs: number;

  constructor(readonly limits: ArchiveBuildLimits) {
    this.#maxWaiting = limits.maxWaiting ?? limits.concurrent * 2;
    this.#maxWaitMs = limits.maxWaitMs ?? 5_000;
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

  async #run(key: string, build: () => Promise<SkillArchive>): Promise<SkillArchive> {
    await this.#acquire();
    try {
      this.counters.builds++;
      const archive = await build();
      // An archive larger than a quarter of the cache would only push everything else out.
      if (this.#cache && archive.bytes.length <= this.limits.cacheBytes / 4) this.#cache.set(key, archive);
      return archive;
    } finally {
      this.#release();
    }
  }

  #acquire(): Promise<void> {
    if (this.#running < this.limits.concurrent) {
      this.#running++;
      return Promise.resolve();
    }
    if (this.#waiting.length >= this.#maxWaiting) return Promise.reject(this.#busy());
    return new Promise<void>((resolve, reject) => {
      const wake = () => {
        clearTimeout(timer);
        this.#running++;
        resolve();
      };
      const timer = setTimeout(() => {
        const at = this.#waiting.indexOf(wake);
        if (at >= 0) this.#waiting.splice(at, 1);
        reject(this.#busy());
      }, this.#maxWaitMs);
      this.#waiting.push(wake);
    });
  }

  #release(): void {
    this.#running--;
    this.#waiting.shift()?.();
  }

  #busy() {
    this.counters.shed++;
    return problem(
      'unavailable',
      'Archive builds are saturated; retry shortly (other routes are unaffected).',
      { retryAfterSeconds: ARCHIVE_RETRY_AFTER_SECONDS },
      { 'retry-after': String(ARCHIVE_RETRY_AFTER_SECONDS) },
    );
  }
}
