import { setImmediate as nextTurn } from 'node:timers/promises';

/** How long a long computation may hold the event loop before it lets requests in (milliseconds). */
export const SLICE_MS = 20;

/**
 * Cuts a long computation on the event loop (a model's build over 57,000 skills takes a minute) into
 * slices of about `sliceMs`, so requests are answered between them: `if (slice.due()) await slice.pause()`
 * at the top of an outer loop. What a loop computes does not depend on where it pauses. Written here:
 * Node 20 has no `scheduler.yield`, and the builds stay on the main thread because what they build is
 * read there (a worker would copy the model back). A `sliceMs` of Infinity never pauses (the
 * benchmark's baseline).
 */
export class TimeSlicer {
  private since = performance.now();
  /** Event-loop turns let through so far. */
  pauses = 0;

  constructor(private readonly sliceMs = SLICE_MS) {}

  /** Whether this slice has run its time (cheap enough to ask every row). */
  due(): boolean {
    return performance.now() - this.since >= this.sliceMs;
  }

  /** Lets the event loop run, then starts a new slice. */
  async pause(): Promise<void> {
    this.pauses++;
    await nextTurn();
    this.since = performance.now();
  }
}
