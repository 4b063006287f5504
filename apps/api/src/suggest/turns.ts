/**
 * Turns in arrival order for CPU-bound work on one event loop. Without them, every request that arrived
 * in one poll of the loop is answered in that poll, one after the other, in socket order: under load a
 * request that just missed a poll waits for the whole batch ahead of it and then for its place in the
 * next, so the slowest answers take about two batches while the median takes one. Taking a turn defers
 * the work to its own pass of the loop (setImmediate), and each pass lets the loop read what arrived
 * meanwhile before the next turn is given: requests are served first come, first served.
 */
export class Turns {
  private readonly waiting: (() => void)[] = [];
  private head = 0;
  private scheduled = false;

  /** Resolves when it is this caller's turn; the caller's synchronous work then runs alone in that pass. */
  take(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.schedule();
    });
  }

  /** Callers waiting for a turn. */
  get queued(): number {
    return this.waiting.length - this.head;
  }

  private schedule(): void {
    if (this.scheduled || this.queued === 0) return;
    this.scheduled = true;
    setImmediate(this.give);
  }

  private readonly give = (): void => {
    this.scheduled = false;
    const next = this.waiting[this.head++];
    if (this.head > 64 && this.head * 2 > this.waiting.length) {
      this.waiting.splice(0, this.head);
      this.head = 0;
    }
    // Scheduled before the turn's work runs: an immediate queued now runs in the loop's next pass.
    this.schedule();
    next?.();
  };
}
