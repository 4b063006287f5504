import { problem } from '../problems.js';

/** Bounds of a gate: how many run at once, how many may wait, and for how long. */
export interface GateLimits {
  /** Holders at once. */
  concurrent: number;
  /** Callers that may wait for a slot; past it, refused at once (default: twice `concurrent`). */
  maxWaiting?: number;
  /** How long a caller waits for a slot before it is refused (default 5 s). */
  maxWaitMs?: number;
}

/**
 * At most `concurrent` holders at once; a few more callers wait briefly, the rest get `503 unavailable` with
 * Retry-After at once: work that holds much memory or CPU (an archive build, a publish) costs a bounded
 * amount of both in a burst, and never the other routes.
 */
export class ConcurrencyGate {
  /** Callers refused (busy). */
  shed = 0;
  readonly #waiting: (() => void)[] = [];
  #running = 0;
  readonly #maxWaiting: number;
  readonly #maxWaitMs: number;

  constructor(
    readonly limits: GateLimits,
    /** What a refused caller is told, and when to ask again. */
    private readonly busy: { detail: string; retryAfterSeconds: number },
  ) {
    this.#maxWaiting = limits.maxWaiting ?? limits.concurrent * 2;
    this.#maxWaitMs = limits.maxWaitMs ?? 5_000;
  }

  /** A slot, once one is free: resolves with its release (calling it again does nothing). */
  acquire(): Promise<() => void> {
    if (this.#running < this.limits.concurrent) {
      this.#running++;
      return Promise.resolve(this.#releaser());
    }
    if (this.#waiting.length >= this.#maxWaiting) return Promise.reject(this.#busy());
    return new Promise((resolve, reject) => {
      const wake = () => {
        clearTimeout(timer);
        this.#running++;
        resolve(this.#releaser());
      };
      const timer = setTimeout(() => {
        const at = this.#waiting.indexOf(wake);
        if (at >= 0) this.#waiting.splice(at, 1);
        reject(this.#busy());
      }, this.#maxWaitMs);
      this.#waiting.push(wake);
    });
  }

  /** Runs `work` holding a slot. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await work();
    } finally {
      release();
    }
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#running--;
      this.#waiting.shift()?.();
    };
  }

  #busy() {
    this.shed++;
    const { detail, retryAfterSeconds } = this.busy;
    return problem(
      'unavailable',
      detail,
      { retryAfterSeconds },
      { 'retry-after': String(retryAfterSeconds) },
    );
  }
}
