import { RequestError } from '@octokit/request-error';
import { describe, expect, it } from 'vitest';
import { isRateLimitAnswer } from './rate-limit.js';

function answer(status: number, message: string, headers: Record<string, string> = {}): RequestError {
  return new RequestError(message, status, {
    request: { method: 'GET', url: 'https://api.github.com/x', headers: {} },
    response: { status, url: 'https://api.github.com/x', headers, data: {} },
  });
}

describe('isRateLimitAnswer', () => {
  it('reads 429 and a 403 that names the limit as rate limits', () => {
    expect(isRateLimitAnswer(answer(429, 'Too many'))).toBe(true);
    expect(isRateLimitAnswer(answer(403, 'x', { 'retry-after': '60' }))).toBe(true);
    expect(isRateLimitAnswer(answer(403, 'x', { 'x-ratelimit-remaining': '0' }))).toBe(true);
    expect(isRateLimitAnswer(answer(403, 'You have exceeded a secondary rate limit.'))).toBe(true);
  });

  it('reads a plain 403, other statuses and non-errors as not limited', () => {
    expect(isRateLimitAnswer(answer(403, 'Resource not accessible by integration'))).toBe(false);
    expect(isRateLimitAnswer(answer(403, 'x', { 'x-ratelimit-remaining': '12' }))).toBe(false);
    expect(isRateLimitAnswer(answer(404, 'rate limit'))).toBe(false);
    expect(isRateLimitAnswer(new Error('rate limit'))).toBe(false);
    expect(isRateLimitAnswer(undefined)).toBe(false);
  });
});
