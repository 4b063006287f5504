/**
 * At most `size` holders at once, the rest waiting in arrival order. Repository jobs take a slot before
 * their first git process, so many jobs can be in flight on a cheap conditional REST request while only a
 * few clone and parse at a time. Hand-written: a counting semaphore is a dozen lines, and neither BullMQ
 * nor the workspace's dependencies offer one.
 */
export class GitSlots {
  private held = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {}

  /** Resolves with the release function once a slot is free. */
  async acquire(): Promise<() => void> {
    if (this.held >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.held++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter, so `held` stays as it is.
      if (next) next();
      else this.held--;
    };
  }
}
