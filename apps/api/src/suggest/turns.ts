/**
 * Turns in arrival order for CPU-bound work on one event loop. Without them, every request that arrived
 * in one poll of the loop is answered in that poll, one after the other, in socket order: under load a
 * request that just missed a poll waits for the whole batch ahead of it and then for its place in the
 * next, so the slowest answers take about two batches while the median takes one. Taking a turn defers
 * the work to its own pass of the loop (setImmediate), and each pass lets the loop read what arrived
 * meanwhile before the next turn is given: requests are served first come, first served.
 *
 * A caller may bring a deadline (an agent's hook waits 400 ms, then goes on without an answer). When
 * the turns ahead of it cannot be given before then, it is refused at once instead of queued: it learns
 * now what it would otherwise learn at its deadline, and the queue stays short enough for the callers
 * in it to make theirs (deadline-aware admission; the order stays first come, first served, so no caller
 * starves as under a LIFO). A caller that leaves gives its place up at once.
 *
 * Connections waiting to be accepted are let in before each turn. libuv accepts one connection per pass of
 * the loop (one accept4 per epoll wait, seen with strace on Node 20), so with one turn of several ms a pass,
 * a caller that opens a connection per request (an agent's hook) waited in the kernel's accept queue, where
 * the hub could neither see it, nor refuse it, nor notice it leave: at 64 such callers a health check took
 * 0.2-0.5 s in a minimal server. While the last pass accepted a connection, the next turn waits for one more
 * pass (at most INTAKE_PASSES), so the queue forms here instead.
 */
export class Turns {
  private readonly waiting: Waiter[] = [];
  private head = 0;
  private live = 0;
  private scheduled = false;
  /** When the last turn was given (performance.now()), until the pass after it measured it. */
  private lastGiven: number | undefined;
  private measuring = false;
  /**
   * What a turn takes (ms, exponentially weighted): from giving it to the next pass of the loop, so its
   * work and what the loop read beside it. Measured on every turn, not only on turns given back to back:
   * a hub that is seldom queued would otherwise keep one slow early turn (a cold start) as its estimate.
   */
  private interval = 0;
  /** Connections accepted when the last turn was given (of intake.accepted), and passes let by since. */
  private seenAccepted = 0;
  private intakePasses = 0;

  constructor(
    /** The server's count of accepted connections (ConnectionIntake), when requests come over a socket. */
    private readonly intake?: ConnectionIntake,
    /** The clock turns, deadlines and the estimate are read on (tests give one they move by hand). */
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Resolves when it is this caller's turn; the caller's synchronous work then runs alone in that pass.
   * Rejects with TurnRefusedError when the caller left (`callerLeft` aborted) or cannot be served by its
   * `deadline` (performance.now() time) given the turns ahead of it.
   */
  take(options: TurnOptions = {}): Promise<void> {
    const { callerLeft, deadline } = options;
    if (callerLeft?.aborted) return Promise.reject(new TurnRefusedError('left', this.live, 0));
    const refused = deadline === undefined ? undefined : this.refusal(deadline);
    if (refused) return Promise.reject(refused);
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

  /**
   * Why a caller asking now with `deadline` (performance.now() time) would be refused: the turns queued
   * ahead of it and its own, at the time a turn has taken lately, end past it. Undefined when it would
   * be admitted (always when nothing waits).
   */
  refusal(deadline: number): TurnRefusedError | undefined {
    if (this.live === 0) return undefined;
    // Its own turn counts too: the answer is due when its work is done, not when it starts.
    const expected = (this.live + 1) * this.interval;
    return this.now() + expected > deadline ? new TurnRefusedError('late', this.live, expected) : undefined;
  }

  private leave(waiter: Waiter): void {
    if (waiter.gone) return;
    this.settle(waiter);
    waiter.reject(new TurnRefusedError('left', this.live, 0));
  }

  private schedule(): void {
    if (this.scheduled || this.live === 0) return;
    this.scheduled = true;
    setImmediate(this.give);
  }

  /** The estimated time a turn takes (ms; 0 before the first). */
  get turnMs(): number {
    return this.interval;
  }

  /** Takes the time since the last turn was given as one measure of a turn (in the pass after it). */
  private measure(now: number): void {
    if (this.lastGiven === undefined) return;
    const since = now - this.lastGiven;
    this.lastGiven = undefined;
    this.interval = this.interval === 0 ? since : this.interval * 0.9 + since * 0.1;
  }

  private readonly measured = (): void => {
    this.measuring = false;
    this.measure(this.now());
  };

  private readonly give = (): void => {
    this.scheduled = false;
    this.measure(this.now());
    const accepted = this.intake?.accepted ?? 0;
    if (accepted !== this.seenAccepted && this.intakePasses < INTAKE_PASSES) {
      // The last pass accepted a connection: another may wait behind it. A pass without a turn is cheap.
      this.seenAccepted = accepted;
      this.intakePasses++;
      this.scheduled = true;
      setImmediate(this.give);
      return;
    }
    this.seenAccepted = accepted;
    this.intakePasses = 0;
    const now = this.now();
    let next: Waiter | undefined;
    while (this.head < this.waiting.length && !next) {
      const waiter = this.waiting[this.head++]!;
      if (waiter.gone) continue;
      this.settle(waiter);
      if (waiter.deadline !== undefined && now >= waiter.deadline) {
        // Admitted on an estimate that proved short: its caller no longer waits for the answer. Refused
        // without a turn, so the time between turns goes on measuring turns that work.
        waiter.reject(new TurnRefusedError('late', this.live, 0));
      } else next = waiter;
    }
    if (this.head > 64 && this.head * 2 > this.waiting.length) {
      this.waiting.splice(0, this.head);
      this.head = 0;
    }
    if (!next) return;
    this.lastGiven = now;
    // Scheduled before the turn's work runs: an immediate queued now runs in the loop's next pass, which
    // measures the turn (the next give, or `measured` when nobody waits).
    this.schedule();
    if (!this.scheduled && !this.measuring) {
      this.measuring = true;
      setImmediate(this.measured);
    }
    next.resolve();
  };

  /** Takes a waiter out of the queue (its turn came, or it was refused at it). */
  private settle(waiter: Waiter): void {
    waiter.gone = true;
    this.live--;
    if (waiter.onLeft) waiter.callerLeft?.removeEventListener('abort', waiter.onLeft);
  }
}

/** Passes of the loop a turn waits at most while connections are being accepted (one a pass). */
export const INTAKE_PASSES = 64;

/** Counts the connections a server accepted (its 'connection' events): see Turns. */
export class ConnectionIntake {
  accepted = 0;

  /** Counts every connection `server` accepts. */
  watch(server: { on(event: 'connection', listener: () => void): unknown }): void {
    server.on('connection', () => {
      this.accepted++;
    });
  }
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
