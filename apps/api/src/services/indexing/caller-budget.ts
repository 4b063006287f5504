/**
 * How many index requests each caller may start per window (a minute unless told), shared by POST /v1/index-requests and the
 * on-demand `gh:` reads that start one. Hand-written rather than @fastify/rate-limit: that plugin limits
 * whole routes, and the reads must stay unlimited while only the requests they start are counted. Counts
 * are per API process (fixed one-minute windows); callers are keyed as the hub's rate limit keys them.
 */
export class CallerBudget {
  private readonly windows = new Map<string, { startedAt: number; used: number }>();

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
    /** The window's length (fixed windows): 60 s by default, an hour for the GitHub-quota budgets. */
    private readonly windowMs = 60_000,
  ) {}

  /** Spends one request of `caller`'s budget: the seconds to wait when it is spent, else 0. */
  take(caller: string): number {
    const now = this.now();
    if (this.windows.size > 10_000) this.prune(now);
    let window = this.windows.get(caller);
    if (!window || now - window.startedAt >= this.windowMs) {
      window = { startedAt: now, used: 0 };
      this.windows.set(caller, window);
    }
    if (window.used >= this.perMinute)
      return Math.max(1, Math.ceil((window.startedAt + this.windowMs - now) / 1000));
    window.used++;
    return 0;
  }

  private prune(now: number): void {
    for (const [caller, window] of this.windows) {
      if (now - window.startedAt >= this.windowMs) this.windows.delete(caller);
    }
  }
}

/**
 * Spends GitHub's quota per caller (issue 24 finding 13): a crawl of a repository the hub never indexed
 * costs GitHub calls, and a made-up name costs them for nothing, so each caller may start `perCaller` such
 * crawls an hour and all callers together `total` (per API process), far under GitHub's 5,000 an hour.
 */
export class GithubQuota {
  private readonly callers: CallerBudget;
  private readonly everyone: CallerBudget;

  constructor(perCaller: number, total: number, now: () => number = Date.now) {
    this.callers = new CallerBudget(perCaller, now, 3_600_000);
    this.everyone = new CallerBudget(total, now, 3_600_000);
  }

  /** Spends one crawl of `caller`'s and everyone's hour: the seconds to wait when either is spent, else 0. */
  take(caller: string): number {
    const own = this.callers.take(caller);
    if (own > 0) return own;
    return this.everyone.take('*');
  }
}
