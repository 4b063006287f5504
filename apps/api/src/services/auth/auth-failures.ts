/**
 * Counts failed authentications per client address in fixed one-minute windows, so a caller guessing
 * tokens is cut off after a few tries, and once cut off costs no database lookup. Kept in process memory
 * (per replica; a replica count times the limit is still a tiny guessing rate against 256-bit tokens),
 * bounded in size: when full, the oldest windows go first.
 */
export class AuthFailureCounter {
  private readonly windows = new Map<string, { start: number; failures: number }>();

  constructor(
    private readonly max: number,
    private readonly windowMs = 60_000,
    private readonly maxAddresses = 50_000,
  ) {}

  /** Seconds until `address` may try again, or 0 when it may authenticate now. */
  retryAfterSeconds(address: string, now: number): number {
    if (this.max <= 0) return 0;
    const entry = this.windows.get(address);
    if (!entry || now - entry.start >= this.windowMs || entry.failures < this.max) return 0;
    return Math.max(1, Math.ceil((entry.start + this.windowMs - now) / 1000));
  }

  /** Records one failed authentication from `address`. */
  fail(address: string, now: number): void {
    if (this.max <= 0) return;
    const entry = this.windows.get(address);
    if (entry && now - entry.start < this.windowMs) {
      entry.failures += 1;
      return;
    }
    this.windows.delete(address);
    if (this.windows.size >= this.maxAddresses) {
      const oldest = this.windows.keys().next().value;
      if (oldest !== undefined) this.windows.delete(oldest);
    }
    this.windows.set(address, { start: now, failures: 1 });
  }
}
