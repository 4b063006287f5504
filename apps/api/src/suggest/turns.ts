/**
 * Turns in arrival order for CPU-bound work on one event loop. Without them, every request that arrived
 * in one poll of the loop is answered in that poll, one after the other, in socket order: under load a
 * request that just missed a poll waits for the whole batch ahead of it and then for its place in the
 * next, so the slowest answers take about two batches while the median takes one. Taking a turn defers
 * the work to its own pass of the loop (setImmediate), and each pass lets the loop read what arrived
 * meanwhile before the next turn is given: requests are served first come, first served.
 *
 * A caller may bring a deadline (an agent's hook waits 800 ms, then goes on without an answer). When
 * the turns ahead of it cannot be given before then, it is refused at once instead of queued: it learns
 * now what it would otherwise learn at its deadline, and the queue stays short enough for the callers
 * in it to make theirs (deadline-aware admission; the order stays first come, first served, so no caller
 * starves as under a LIFO). A caller that leaves gives its place up at once.
 */
export class Turns {
  private readonly waiting: Waiter[] = [];
  private head = 0;
  private live = 0;
  private scheduled = false;
  /** When the last turn was given while others waited (performance.now()), else undefined (idle). */
  private lastGiven: number | undefined;
  /** Mean time between two turns under load (ms, exponentially weighted): one turn's work and what ran beside it. */
  private interval = 0;

  /**
   * Resolves when it is this caller's turn; the caller's synchronous work then runs alone in that pass.
   * Rejects with TurnRefusedError when the caller left (`callerLeft` aborted) or cannot be served by its
   * `deadline` (performance.now() time) given the turns ahead of it.
   */
  take(options: TurnOptions = {}): Promise<void> {
    const { callerLeft, deadline } = options;
    if (callerLeft?.aborted) return Promise.reject(new TurnRefusedError('left', this.live, 0));
    if (deadline !== undefined) {
      // Its own turn counts too: the answer is due when its work is done, not when it starts.
      const expected = this.expectedWait(this.live + 1);
      if (performance.now() + expected > deadline)
        return Promise.reject(new TurnRefusedError('late', this.live, expected));
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, deadline, callerLeft, gone: false, onLeft: undefined };
      if (callerLeft) {
        waiter.onLeft = () => this.leave(waiter);
        callerLeft.addEventListener('abort', waiter.onLeft, { once: true });
      }
      this.waiting.push(waiter);
      this.live++;
      this.schedule();
    });
  }

  /** Callers waiting for a turn (those that left are not counted). */
  get queued(): number {
    return this.live;
  }

  /** The expected wait (ms) for a caller with `ahead` turns to be given before its own is done; 0 when idle. */
  expectedWait(ahead: number): number {
    return this.live === 0 ? 0 : ahead * this.interval;
  }

  private leave(waiter: Waiter): void {
    if (waiter.gone) return;
    waiter.gone = true;
    this.live--;
    waiter.reject(new TurnRefusedError('left', this.live, 0));
  }

  private schedule(): void {
    if (this.scheduled || this.live === 0) return;
    this.scheduled = true;
    setImmediate(this.give);
  }

  private readonly give = (): void => {
    this.scheduled = false;
    let next: Waiter | undefined;
    while (this.head < this.waiting.length && !next) {
      const waiter = this.waiting[this.head++]!;
      if (!waiter.gone) next = waiter;
    }
    if (this.head > 64 && this.head * 2 > this.waiting.length) {
      this.waiting.splice(0, this.head);
      this.head = 0;
    }
    if (!next) return;
    next.gone = true;
    this.live--;
    if (next.onLeft) next.callerLeft?.removeEventListener('abort', next.onLeft);
    const now = performance.now();
    if (this.lastGiven !== undefined) {
      const since = now - this.lastGiven;
      this.interval = this.interval === 0 ? since : this.interval * 0.8 + since * 0.2;
    }
    // Only the time between two turns given back to back measures a turn (an idle gap does not).
    this.lastGiven = this.live > 0 ? now : undefined;
    // Scheduled before the turn's work runs: an immediate queued now runs in the loop's next pass.
    this.schedule();
    if (next.deadline !== undefined && now >= next.deadline) {
      // Admitted on an estimate that proved short: its caller no longer waits for the answer.
      next.reject(new TurnRefusedError('late', this.live, 0));
      return;
    }
    next.resolve();
  };
}

/** How a caller waits for its turn. */
export interface TurnOptions {
  /** Aborts when the caller left: its place is given up. */
  callerLeft?: AbortSignal | undefined;
  /** When (performance.now() time, ms) the caller stops waiting for the answer. */
  deadline?: number | undefined;
}

/** A caller that will not get its turn: it `left`, or it would be `late` for its deadline. */
export class TurnRefusedError extends Error {
  constructor(
    readonly reason: 'left' | 'late',
    /** Callers waiting ahead of it when it was refused. */
    readonly ahead: number,
    /** The wait (ms) that made it late, as estimated when it asked (0 when it was already past). */
    readonly expectedWaitMs: number,
  ) {
    super(reason === 'left' ? 'the caller left before its turn' : 'its turn would come after its deadline');
  }
}

interface Waiter {
  resolve: () => void;
  reject: (err: TurnRefusedError) => void;
  deadline: number | undefined;
  callerLeft: AbortSignal | undefined;
  gone: boolean;
  onLeft: (() => void) | undefined;
}
