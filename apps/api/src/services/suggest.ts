import type { ReadScope } from '@atskills/db';
import { SUGGEST_TIMEOUT_HEADER } from '@atskills/protocol';
import { type HttpProblem, problem } from '../problems.js';
import type { SuggestHitResponse, SuggestPageResponse } from '../schemas.js';
import {
  type SuggestEngine,
  SuggestOverloadedError,
  SuggestUnavailableError,
  type SuggestWaiting,
} from '../suggest/engine.js';
import { searchHitResponse } from './search.js';

/** A queue too long for one caller's deadline drains in well under a second. */
const OVERLOADED_RETRY_AFTER_S = 1;

/** The 503 answer to a suggestion refused as overloaded (SuggestOverloadedError). */
export function overloadedProblem(err: SuggestOverloadedError): HttpProblem {
  return problem(
    'unavailable',
    `The hub is too busy to suggest before the deadline in ${SUGGEST_TIMEOUT_HEADER}: ${err.message}.`,
    { retryAfterSeconds: OVERLOADED_RETRY_AFTER_S, ahead: err.ahead },
    { 'retry-after': String(OVERLOADED_RETRY_AFTER_S) },
  );
}

/**
 * Suggestions for a message in their wire shape (GET/POST /v1/suggest, MCP, the web page). Rejects with
 * SuggestAbandonedError when `waiting.callerLeft` aborted before the work began (the caller is gone), and
 * with a 503 problem (Retry-After: 1) when the work could not be done by `waiting.deadline`.
 */
export async function suggestSkills(
  engine: SuggestEngine,
  viewer: ReadScope,
  message: string,
  limit: number,
  waiting?: SuggestWaiting,
): Promise<SuggestPageResponse> {
  let answer: Awaited<ReturnType<SuggestEngine['suggest']>>;
  try {
    answer = await engine.suggest(message, viewer, limit, undefined, waiting);
  } catch (err) {
    if (err instanceof SuggestOverloadedError) throw overloadedProblem(err);
    if (!(err instanceof SuggestUnavailableError)) throw err;
    const wait = err.retryAfterSeconds;
    throw problem(
      'unavailable',
      // "Yet" only while a build is under way: a failed build (no retry time) waits on its operator.
      `Suggestions are not available${wait === undefined ? '' : ' yet'}: ${err.message}`,
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
