/**
 * How many index requests each caller may start per minute, shared by POST /v1/index-requests and the
 * on-demand `gh:` reads that start one. Hand-written rather than @fastify/rate-limit: that plugin limits
 * whole routes, and the reads must stay unlimited while only the requests they start are counted. Counts
 * are per API process (fixed one-minute windows); callers are keyed as the hub's rate limit keys them.
 */
export class CallerBudget {
  private readonly windows = new Map<string, { startedAt: number; used: number }>();

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Spends one request of `caller`'s budget: the seconds to wait when it is spent, else 0. */
  take(caller: string): number {
    const now = this.now();
    if (this.windows.size > 10_000) this.prune(now);
    let window = this.windows.get(caller);
    if (!window || now - window.startedAt >= 60_000) {
      window = { startedAt: now, used: 0 };
      this.windows.set(caller, window);
    }
    if (window.used >= this.perMinute)
      return Math.max(1, Math.ceil((window.startedAt + 60_000 - now) / 1000));
    window.used++;
    return 0;
  }

  private prune(now: number): void {
    for (const [caller, window] of this.windows) {
      if (now - window.startedAt >= 60_000) this.windows.delete(caller);
    }
  }
}
