import { SUGGEST_TIMEOUT_HEADER, SUGGEST_TIMEOUT_MAX_MS } from '@atskills/protocol';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { leanJsonRouteWith } from '../../plugins/security.js';
import { problem } from '../../problems.js';
import { problems, SuggestBody, SuggestPageResponse, SuggestQuery } from '../../schemas.js';
import { overloadedProblem, suggestSkills } from '../../services/suggest.js';
import { SuggestAbandonedError, type SuggestWaiting } from '../../suggest/engine.js';

/**
 * Nginx's "client closed request": the caller left before its suggestion's turn, so none was computed.
 * Nobody reads it; the request metrics count it apart from answers and errors.
 */
const CLIENT_CLOSED_REQUEST = 499;

/** Aborts when the connection closes before the answer was written (the caller gave up). */
export function callerLeftSignal(reply: FastifyReply): AbortSignal {
  const left = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) left.abort();
  });
  return left.signal;
}

/** The value of SUGGEST_TIMEOUT_HEADER: read by the schema, and before the body by refuseEarly. */
const TimeoutMs = z.coerce
  .number()
  .int(`${SUGGEST_TIMEOUT_HEADER} must be a whole number of milliseconds`)
  .min(1)
  .max(SUGGEST_TIMEOUT_MAX_MS);

/** The caller's deadline header; every other header passes through untouched (authorization among them). */
const SuggestHeaders = z.looseObject({
  [SUGGEST_TIMEOUT_HEADER]: TimeoutMs.optional().describe(
    'How long the caller waits for the answer (ms). When the suggestions queued ahead of this one would ' +
      'keep it longer, the hub answers at once 503 with Retry-After instead of late (an agent hook sends its deadline).',
  ),
});

/** When (performance.now() time) a caller that waits `timeoutMs` stops waiting. */
function deadlineOf(reply: FastifyReply, timeoutMs: number): number {
  // The caller's clock started when it sent the request: count what the hub spent on it already.
  return performance.now() - reply.elapsedTime + timeoutMs;
}

/** How this request waits for its turn: until its connection closes, or its stated deadline passes. */
function waitingOf(reply: FastifyReply, timeoutMs: number | undefined): SuggestWaiting {
  const callerLeft = callerLeftSignal(reply);
  return timeoutMs === undefined ? { callerLeft } : { callerLeft, deadline: deadlineOf(reply, timeoutMs) };
}

/** A suggestion's answer, or nothing for a caller that left before it was computed. */
async function answerOrNothing<T>(reply: FastifyReply, answer: Promise<T>): Promise<T | undefined> {
  try {
    return await answer;
  } catch (err) {
    if (!(err instanceof SuggestAbandonedError)) throw err;
    reply.code(CLIENT_CLOSED_REQUEST).send();
    return undefined;
  }
}

const DESCRIPTION =
  'The skills that would help with a message a user typed to their agent (SPEC 2.7). The hub finds the need in ' +
  'the message (code blocks, logs, paths and quoted text are set aside; a message with two needs gets both ' +
  'covered), retrieves lexically and semantically, fuses and reranks. `score` is the estimated probability ' +
  'that the skill helps, the same meaning in every message; `matched` is the part of the message it answers. ' +
  'When no skill fits well enough the answer is `{"results": [], "abstained": true}`.';

/**
 * The POST body is JSON and nothing else, whatever else it is sent as. Fastify would read text/plain as a
 * string (then refused 400 "expected object, received string") and refuse other types with a bare 415
 * "Unsupported Media Type": checked before the body is parsed, each is one 415 saying what to send.
 */
function jsonOnly(request: FastifyRequest): void {
  const type = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') {
    throw problem(
      'unsupported-media-type',
      'The body must be JSON (content-type application/json): {"message": "...", "limit": 5}.',
    );
  }
}

/** GET and POST /v1/suggest (SPEC 2.7). */
const suggestRoutes: FastifyPluginAsyncZod = async (app) => {
  /**
   * A caller the queue would keep past its deadline is refused before its body is read: under overload
   * the refusals must cost next to nothing, or they take the time the admitted suggestions need. A header
   * that is no valid timeout is left to the schema (400).
   */
  const refuseEarly = async (request: FastifyRequest, reply: FastifyReply) => {
    const stated = request.headers[SUGGEST_TIMEOUT_HEADER];
    if (stated === undefined) return;
    const timeoutMs = TimeoutMs.safeParse(stated);
    if (!timeoutMs.success) return;
    const refused = app.suggestEngine.refusal(deadlineOf(reply, timeoutMs.data));
    if (refused) throw overloadedProblem(refused);
  };

  app.get(
    '/suggest',
    {
      ...leanJsonRouteWith(refuseEarly),
      schema: {
        operationId: 'suggest',
        tags: ['search'],
        summary: 'Suggest skills for a message (short messages in the query string)',
        description: `${DESCRIPTION} Messages over 2,000 characters go in a POST.`,
        querystring: SuggestQuery,
        headers: SuggestHeaders,
        // 401 for a token that is not valid (plugins/viewer.ts), 429 past the rate limit shared with search.
        response: { 200: SuggestPageResponse, ...problems(400, 401, 429, 503) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-cache');
      return answerOrNothing(
        reply,
        suggestSkills(
          app.suggestEngine,
          request.viewer,
          request.query.q,
          request.query.limit,
          waitingOf(reply, request.headers[SUGGEST_TIMEOUT_HEADER]),
        ),
      );
    },
  );
  app.post(
    '/suggest',
    {
      // A POST that only reads: it must not drop the read cache, nor send the in-memory index and the
      // suggestion model to the database for changes before the next request (plugins/search.ts).
      config: { readOnly: true },
      ...leanJsonRouteWith(refuseEarly),
      preParsing: async (request, _reply, payload) => {
        jsonOnly(request);
        return payload;
      },
      schema: {
        operationId: 'suggestMessage',
        tags: ['search'],
        summary: 'Suggest skills for a message (up to 8,000 characters)',
        description: DESCRIPTION,
        body: SuggestBody,
        headers: SuggestHeaders,
        // As GET, plus 413 for a body over BODY_LIMIT and 415 for one that is not JSON.
        response: { 200: SuggestPageResponse, ...problems(400, 401, 413, 415, 429, 503) },
      },
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-cache');
      return answerOrNothing(
        reply,
        suggestSkills(
          app.suggestEngine,
          request.viewer,
          request.body.message,
          request.body.limit,
          waitingOf(reply, request.headers[SUGGEST_TIMEOUT_HEADER]),
        ),
      );
    },
  );
};

export default suggestRoutes;
