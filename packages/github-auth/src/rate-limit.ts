/**
 * Whether a GitHub answer refused a request for its rate limit (primary or secondary) rather than for
 * the credential: a 429, or a 403 with `retry-after`, `x-ratelimit-remaining: 0` or "rate limit" in its
 * message. GitHub answers both limits with 403 as often as 429, so the status alone cannot tell, and a
 * limited answer says nothing about the credential, the installation or the repository.
 */
export function isRateLimitAnswer(error: unknown): boolean {
  if (typeof error !== 'object' || error === null || !('status' in error)) return false;
  const status = Number(error.status);
  if (status === 429) return true;
  if (status !== 403) return false;
  const headers = ((error as { response?: { headers?: Record<string, unknown> } }).response?.headers ??
    {}) as Record<string, unknown>;
  return (
    headers['retry-after'] !== undefined ||
    headers['x-ratelimit-remaining'] === '0' ||
    /rate limit/i.test(error instanceof Error ? error.message : '')
  );
}
