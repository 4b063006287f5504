import { jobIdProblem } from '@atskills/queue';
import { RateLimitedError } from './github/rate-limited-error.js';

export interface InProcessJobMeta {
  id: string;
  attempt: number;
  finalAttempt: boolean;
}

export interface InProcessQueueOptions {
  concurrency: number;
  attempts: number;
  /** First retry delay, doubled at each attempt (as BullMQ's exponential backoff). */
  backoffMs: number;
  /** At most `max` job starts per `durationMs` (as BullMQ's limiter). */
  limiter?: { max: number; durationMs: number };
  onError?: (error: unknown, job: InProcessJobMeta) => void;
  /** A job that failed its last attempt (not one dropped by close), as BullMQ's final `failed` event. */
  onFailed?: (error: unknown, data: unknown) => void;
  /**
   * A job that will never run because the queue closed: waiting at close, added after it, or failed or
   * rate-limited while closing (BullMQ would keep it in Redis for the next worker; here it is gone).
   */
  onDropped?: (data: unknown) => void;
}

interface Pending<T> {
  id: string;
  data: T;
  attempt: number;
  readyAt: number;
}

/**
 * A small in-memory queue with BullMQ's semantics where the crawler relies on them (job ids that drop
 * duplicates, concurrency, a start-rate limiter, retries with exponential backoff, rate-limit delays
 * that do not use an attempt), so a single machine crawls without Redis. Hand-written because the
 * candidates on npm (p-queue and the like) have no job ids, retries or delays; it holds no state worth
 * keeping: Postgres holds the crawl's results.
 */
export class InProcessQueue<T> {
  private readonly pending: Pending<T>[] = [];
  private readonly seen = new Set<string>();
  private readonly starts: number[] = [];
  private active = 0;
  private completed = 0;
  private failed = 0;
  private pausedUntil = 0;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    readonly name: string,
    private readonly handler: (data: T, meta: InProcessJobMeta) => Promise<unknown>,
    private readonly options: InProcessQueueOptions,
  ) {}

  /**
   * Adds a job unless one with the same id was ever added (as BullMQ, while the job is retained). An id
   * BullMQ would refuse is refused here too, so a bad id fails on a single machine as it would on Redis.
   */
  add(data: T, jobId: string): boolean {
    const bad = jobIdProblem(jobId);
    if (bad) throw new Error(`Refused a ${this.name} job: ${bad}`);
    if (this.seen.has(jobId)) return false;
    if (this.closed) {
      this.options.onDropped?.(data);
      return false;
    }
    this.seen.add(jobId);
    this.pending.push({ id: jobId, data, attempt: 1, readyAt: 0 });
    this.pump();
    return true;
  }

  /** True once close() was called: jobs added from then on are dropped. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Job counts by state. */
  counts() {
    const now = Date.now();
    const delayed = this.pending.filter((p) => p.readyAt > now).length;
    return {
      waiting: this.pending.length - delayed,
      delayed,
      active: this.active,
      completed: this.completed,
      failed: this.failed,
    };
  }

  /** Resolves when nothing is waiting, delayed or running. */
  onIdle(): Promise<void> {
    if (this.pending.length === 0 && this.active === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops starting jobs and drops those not started; running ones finish. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.pending) this.options.onDropped?.(job.data);
    this.pending.length = 0;
    if (this.timer) clearTimeout(this.timer);
    if (this.active > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const now = Date.now();
    while (!this.closed && this.active < this.options.concurrency) {
      if (now < this.pausedUntil) {
        this.wakeAt(this.pausedUntil);
        return;
      }
      const limiter = this.options.limiter;
      if (limiter) {
        while (this.starts.length > 0 && this.starts[0]! <= now - limiter.durationMs) this.starts.shift();
        if (this.starts.length >= limiter.max) {
          this.wakeAt(this.starts[0]! + limiter.durationMs);
          return;
        }
      }
      const index = this.pending.findIndex((p) => p.readyAt <= now);
      if (index < 0) {
        const next = Math.min(...this.pending.map((p) => p.readyAt));
        if (Number.isFinite(next)) this.wakeAt(next);
        break;
      }
      const [job] = this.pending.splice(index, 1);
      this.starts.push(now);
      this.run(job!);
    }
    this.checkIdle();
  }

  private wakeAt(at: number): void {
    this.timer = setTimeout(() => this.pump(), Math.max(1, at - Date.now()));
    this.timer.unref?.();
    this.checkIdle();
  }

  private run(job: Pending<T>): void {
    this.active++;
    const meta = { id: job.id, attempt: job.attempt, finalAttempt: job.attempt >= this.options.attempts };
    this.handler(job.data, meta)
      .then(
        () => {
          this.completed++;
        },
        (error: unknown) => {
          if (error instanceof RateLimitedError) {
            // As BullMQ's worker.rateLimit(): everything pauses, and the job waits without using an attempt.
            this.pausedUntil = Math.max(this.pausedUntil, Date.now() + error.retryAfterMs);
            if (!this.closed) this.pending.push({ ...job, readyAt: this.pausedUntil });
            else this.options.onDropped?.(job.data);
            return;
          }
          this.options.onError?.(error, meta);
          if (job.attempt < this.options.attempts && !this.closed) {
            const delay = this.options.backoffMs * 2 ** (job.attempt - 1);
            this.pending.push({ ...job, attempt: job.attempt + 1, readyAt: Date.now() + delay });
          } else {
            this.failed++;
            if (!this.closed) this.options.onFailed?.(error, job.data);
            else this.options.onDropped?.(job.data);
          }
        },
      )
      .finally(() => {
        this.active--;
        this.pump();
      });
  }

  private checkIdle(): void {
    if (this.active === 0 && (this.pending.length === 0 || this.closed)) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }
}
