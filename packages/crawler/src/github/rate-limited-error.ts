/**
 * GitHub (or any upstream) asked us to slow down. Jobs that hit it are delayed until `retryAfterMs`
 * has passed instead of failing, and they do not use up an attempt.
 */
export class RateLimitedError extends Error {
  override name = 'RateLimitedError';
  constructor(
    readonly retryAfterMs: number,
    message = `rate limited for ${Math.ceil(retryAfterMs / 1000)}s`,
  ) {
    super(message);
  }
}

/** How long a rate-limit answer asks us to wait, from Retry-After or x-ratelimit-reset (ms, at least 1s). */
export function retryAfterFromHeaders(headers: Record<string, unknown>, now = Date.now()): number {
  const retryAfter = Number(headers['retry-after']);
  if (Number.isFinite(retryAfter) && retryAfter >= 0) return Math.max(1000, retryAfter * 1000);
  const reset = Number(headers['x-ratelimit-reset']);
  if (Number.isFinite(reset) && reset > 0) return Math.max(1000, reset * 1000 - now + 1000);
  // GitHub's guidance for a secondary limit without a header: wait at least a minute.
  return 60_000;
}
