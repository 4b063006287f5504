import type { IndexChangeEvent, IndexWatch } from '@atskills/db';
import { SYNC_DEBOUNCE_MS, SYNC_INTERVAL_MS } from './tuning.js';

/** How a follower builds and catches up the in-memory structure it keeps. */
export interface FollowerSteps {
  /** True once a build made the structure serve; before that a catch-up waits for the build. */
  ready(): boolean;
  /** Loads the whole structure from Postgres. */
  build(): Promise<void>;
  /** Applies every change committed since the last build or catch-up. */
  catchUp(): Promise<void>;
  onError?: ((err: unknown) => void) | undefined;
  /** Change-feed events closer together than this start one catch-up (default SYNC_DEBOUNCE_MS). */
  debounceMs?: number;
  /** A catch-up at least this often, for changes the feed missed (default SYNC_INTERVAL_MS). */
  intervalMs?: number;
  /** Builds start once this settles (another structure built first); a close meanwhile builds nothing. */
  startAfter?: Promise<void> | undefined;
  /**
   * Run at the first build, at once, beside the wait for `startAfter` (which it does not wait for); the
   * build starts once both have settled. Must not reject.
   */
  beforeFirstBuild?: (() => Promise<void>) | undefined;
}

/** What a structure kept by a ChangeFollower offers the plugin that drives it. */
export interface FollowedStructure {
  /** Builds the structure from Postgres (also run by `start`); resolves when it serves. */
  build(): Promise<void>;
  /** Builds in the background and follows the change feed. */
  start(watch: (onEvent: (event: IndexChangeEvent) => void) => Promise<IndexWatch>): void;
  /** Settles once the first build has ended, serving or failed (or the structure closed before one did). */
  firstBuild(): Promise<void>;
  /** Brings the structure up to date with every committed write now. */
  sync(): Promise<void>;
  /** A write went through this process: the next read catches up first, so its author sees it. */
  noteLocalWrite(): void;
  close(): Promise<void>;
}

/**
 * One in-memory structure kept current from Postgres: built once, then caught up on change-feed events
 * (debounced) and on an interval, one catch-up at a time (asking during one runs it once more after).
 * The in-memory search index and the suggestion model both follow the index this way.
 */
export class ChangeFollower {
  /** A write went through this process: the next read catches up first, so its author sees it. */
  dirty = false;
  /** Why the last build failed (cleared by a build that succeeds). */
  error: string | undefined;
  #building: Promise<void> | null = null;
  #syncing: Promise<void> | null = null;
  #syncAgain = false;
  #closed = false;
  #started = false;
  #watch: IndexWatch | undefined;
  #timer: NodeJS.Timeout | undefined;
  #debounce: NodeJS.Timeout | undefined;
  #firstBuildEnded!: () => void;
  /** Settles once the first build has ended, serving or failed, or the follower closed before one did. */
  readonly firstBuild = new Promise<void>((resolve) => {
    this.#firstBuildEnded = resolve;
  });

  constructor(private readonly steps: FollowerSteps) {}

  /** The build in progress, if any. */
  get building(): Promise<void> | null {
    return this.#building;
  }

  /** True once `close` was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Builds (once at a time, and never beside a catch-up: a catch-up works on the structure a build replaces,
   * and on what the engine keeps beside it, so the two interleaved left a model whose parts came from
   * different builds); resolves when the build ends, failed or not (`error` says which).
   */
  build(): Promise<void> {
    // Started at once when no catch-up runs (a rebuild drops the model before the caller's next step).
    const start = () => this.#startBuild();
    this.#building ??= (this.#syncing ? this.#syncing.then(start) : start())
      .then(
        () => {
          this.error = undefined;
        },
        (err) => {
          this.error = (err as Error).message;
          this.steps.onError?.(err);
        },
      )
      .finally(() => {
        this.#building = null;
        this.#firstBuildEnded();
      });
    return this.#building;
  }

  /**
   * The steps' build, once `startAfter` (and, the first time, `beforeFirstBuild`) has settled; none when
   * the follower closed meanwhile.
   */
  #startBuild(): Promise<void> {
    const { startAfter } = this.steps;
    const prepared = this.#started ? undefined : this.steps.beforeFirstBuild?.();
    this.#started = true;
    if (!startAfter && !prepared) return this.steps.build();
    // Before a build has ended, `firstBuild` settles only when the follower closes.
    return Promise.race([Promise.all([startAfter, prepared]), this.firstBuild]).then(() =>
      this.#closed ? undefined : this.steps.build(),
    );
  }

  /** Catches up with every committed write now (after the build when one is running). */
  sync(): Promise<void> {
    // The build ends with a catch-up of its own; one more after it sees what committed while it ran.
    if (this.#building) return this.#building.then(() => (this.steps.ready() ? this.sync() : undefined));
    if (!this.steps.ready()) return Promise.resolve();
    if (this.#syncing) {
      this.#syncAgain = true;
      return this.#syncing;
    }
    this.dirty = false;
    this.#syncing = this.steps
      .catchUp()
      .catch((err) => this.steps.onError?.(err))
      .finally(() => {
        this.#syncing = null;
        if (this.#syncAgain && !this.#closed) {
          this.#syncAgain = false;
          void this.sync();
        }
      });
    return this.#syncing;
  }

  /** Builds in the background and follows the change feed. */
  start(watchChanges: (onEvent: (event: IndexChangeEvent) => void) => Promise<IndexWatch>): void {
    void this.build();
    void watchChanges((event) => {
      if (event !== 'change' && event !== 'live') return;
      clearTimeout(this.#debounce);
      this.#debounce = setTimeout(() => void this.sync(), this.steps.debounceMs ?? SYNC_DEBOUNCE_MS);
      this.#debounce.unref();
    }).then((w) => {
      if (this.#closed) void w.close();
      else this.#watch = w;
    }, this.steps.onError);
    this.#timer = setInterval(() => void this.sync(), this.steps.intervalMs ?? SYNC_INTERVAL_MS);
    this.#timer.unref();
  }

  /** Stops following and waits for the build and catch-up in progress. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#firstBuildEnded();
    clearInterval(this.#timer);
    clearTimeout(this.#debounce);
    await this.#watch?.close();
    await this.#building?.catch(() => {});
    await this.#syncing?.catch(() => {});
  }
}
