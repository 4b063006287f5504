/** How long a long computation may hold the event loop before it lets requests in (milliseconds). */
export const SLICE_MS = 10;

/** Paused computations, first come first served: one resumes per turn of the event loop. */
const waiting: (() => void)[] = [];
let turnScheduled = false;

/** Resumes the computation that paused first, in this turn's check phase; the next one waits for the next turn. */
function resumeOne(): void {
  waiting.shift()?.();
  if (waiting.length > 0) setImmediate(resumeOne);
  else turnScheduled = false;
}

/**
 * Cuts a long computation on the event loop (a model's build over 57,000 skills takes a minute) into
 * slices of about `sliceMs`, so requests are answered between them: `if (slice.due()) await slice.pause()`
 * at the top of an outer loop. What a loop computes does not depend on where it pauses.
 *
 * All slicers share one queue and one slice runs per turn of the loop. With a plain `setImmediate` each,
 * the search index and the suggestion model (which build together at start) both ran their slice in the
 * same check phase, and a request needs several turns (its socket, each database answer, the reply): a
 * probe took 126 ms at the median while both built. Written here: Node 20 has no `scheduler.yield`, and
 * the builds stay on the main thread because what they build is read there (a worker would copy the
 * model back). A `sliceMs` of Infinity never pauses (the benchmark's baseline).
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

  /** Lets the event loop run (and the computations that paused before this one), then starts a new slice. */
  async pause(): Promise<void> {
    this.pauses++;
    await new Promise<void>((resume) => {
      waiting.push(resume);
      if (!turnScheduled) {
        turnScheduled = true;
        setImmediate(resumeOne);
      }
    });
    this.since = performance.now();
  }
}
