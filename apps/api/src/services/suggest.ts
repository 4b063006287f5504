import type { ReadScope } from '@atskills/db';
import { problem } from '../problems.js';
import type { SuggestHitResponse, SuggestPageResponse } from '../schemas.js';
import { type SuggestEngine, SuggestUnavailableError } from '../suggest/engine.js';
import { searchHitResponse } from './search.js';

/**
 * Suggestions for a message in their wire shape (GET/POST /v1/suggest, MCP, the web page). Rejects with
 * SuggestAbandonedError when `callerLeft` aborted before the work began (the caller is gone).
 */
export async function suggestSkills(
  engine: SuggestEngine,
  viewer: ReadScope,
  message: string,
  limit: number,
  callerLeft?: AbortSignal,
): Promise<SuggestPageResponse> {
  let answer: Awaited<ReturnType<SuggestEngine['suggest']>>;
  try {
    answer = await engine.suggest(message, viewer, limit, undefined, callerLeft);
  } catch (err) {
    if (!(err instanceof SuggestUnavailableError)) throw err;
    const wait = err.retryAfterSeconds;
    throw problem(
      'unavailable',
      `Suggestions are not available yet: ${err.message}`,
      wait === undefined ? undefined : { retryAfterSeconds: wait },
      wait === undefined ? undefined : { 'retry-after': String(wait) },
    );
  }
  return {
    results: answer.results.map(
      (r): SuggestHitResponse => ({ ...searchHitResponse(r.hit), score: r.score, matched: r.matched }),
    ),
    abstained: answer.abstained,
  };
}
