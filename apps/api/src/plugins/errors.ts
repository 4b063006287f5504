import type { Duplex } from 'node:stream';
import { QueueUnavailableError } from '@atskills/crawler';
import { isDatabaseOutage, loggableError } from '@atskills/db';
import { IdentityError, isProtocolError } from '@atskills/protocol';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { HttpProblem, isHttpProblem, PROBLEMS, type ProblemCode, problem, problemType } from '../problems.js';
import { isApiPath, prefersPage, sendNoPage } from '../web/pages/error-page.js';

// What a 5xx logs about its error (the driver's words, never the SQL and its values), for routes that log
// errors themselves: routes reach the database package only through services and plugins.
export { loggableError };

/** Seconds a client should wait before retrying while the database is unreachable. */
const RETRY_AFTER_SECONDS = 5;

/** The problem+json media type of RFC 9457. */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

const STATUS_CODES: Partial<Record<number, ProblemCode>> = {
  400: 'bad-request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not-found',
  405: 'method-not-allowed',
  406: 'not-acceptable',
  409: 'conflict',
  410: 'gone',
  413: 'payload-too-large',
  415: 'unsupported-media-type',
  422: 'bad-request',
  429: 'rate-limited',
  431: 'headers-too-large',
  503: 'unavailable',
};

/** Maps any thrown value to the one problem it becomes. */
export function toProblem(err: unknown): HttpProblem {
  if (isHttpProblem(err)) return err;
  if (hasZodFastifySchemaValidationErrors(err)) {
    const errors = err.validation.map((issue) => ({
      in: err.validationContext ?? 'request',
      path: issue.instancePath,
      message: issue.message ?? 'invalid',
    }));
    const first = errors[0];
    const where = first ? `${first.in}${first.path ? ` ${first.path}` : ''}` : 'request';
    return problem('bad-request', `Invalid ${where}: ${first?.message ?? 'invalid'}`, { errors });
  }
  if (err instanceof IdentityError) return problem('bad-identity', err.message, { reason: err.code });
  if (isProtocolError(err) && err.code === 'bad-cursor') return problem('bad-cursor', err.message);
  if (isResponseSerializationError(err)) return problem('internal');
  if (err instanceof QueueUnavailableError) {
    return problem('unavailable', err.message, {}, { 'retry-after': String(err.retryAfterSeconds) });
  }
  if (isDatabaseOutage(err)) {
    return problem(
      'unavailable',
      'The database is unreachable; retry shortly',
      {},
      {
        'retry-after': String(RETRY_AFTER_SECONDS),
      },
    );
  }
  const statusCode = (err as FastifyError | undefined)?.statusCode;
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    const code = STATUS_CODES[statusCode] ?? 'bad-request';
    // Fastify's own 4xx messages (bad JSON, body too large, unsupported media type) are safe and useful.
    // The framework's status stands even where the code's usual one differs (a 422 is 'bad-request').
    return new HttpProblem(statusCode, code, (err as Error).message);
  }
  return problem('internal');
}

/** The application/problem+json body of `p`, with the request it answers when there was one. */
function problemDocument(
  p: HttpProblem,
  request?: { instance: string; requestId: string },
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    ...p.extensions,
    type: problemType(p.code),
    title: PROBLEMS[p.code].title,
    status: p.status,
    code: p.code,
    ...request,
  };
  // 5xx never carry internals: only the fixed title, plus a detail we wrote ourselves for 503.
  if (p.detail !== undefined && (p.status < 500 || p.code === 'unavailable')) body.detail = p.detail;
  return body;
}

/** Sends `p` as application/problem+json. */
export function sendProblem(request: FastifyRequest, reply: FastifyReply, p: HttpProblem): FastifyReply {
  const body = problemDocument(p, { instance: request.url, requestId: request.id });
  for (const [name, value] of Object.entries(p.headers)) reply.header(name, value);
  // Validators must not be cached against an error answer.
  reply.removeHeader('etag');
  return reply
    .code(p.status)
    .header('content-type', PROBLEM_CONTENT_TYPE)
    .header('cache-control', 'no-store')
    .serializer((payload: unknown) => JSON.stringify(payload))
    .send(body);
}

/**
 * Answers a request Node's HTTP parser refused before any route saw it (Fastify's clientErrorHandler): a
 * problem as every other error is, with no request id (there was no request).
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy(err);
    return;
  }
  const p =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? problem('headers-too-large', 'The request headers are too large')
      : problem(
          'bad-request',
          'The request is malformed HTTP (its request line or a header could not be read)',
        );
  const body = JSON.stringify(problemDocument(p));
  socket.end(
    `HTTP/1.1 ${p.status} ${PROBLEMS[p.code].title}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** The one error handler: every error (thrown, validation, framework, 404 route) becomes a problem. */
export default fp(
  async function errorsPlugin(app: FastifyInstance) {
    app.setErrorHandler((err, request, reply) => {
      const p = toProblem(err);
      if (p.status >= 500) request.log.error({ err: loggableError(err), code: p.code }, 'request failed');
      else request.log.warn({ code: p.code, status: p.status, detail: p.detail }, 'request refused');
      return sendProblem(request, reply, p);
    });
    app.setNotFoundHandler((request, reply) => {
      // A browser sent to a URL no route takes gets a page, as every page error is (docs/api.md); API paths
      // and API clients get the problem.
      if (!isApiPath(request.url) && prefersPage(request.headers.accept)) return sendNoPage(request, reply);
      request.log.warn({ url: request.url }, 'no such route');
      return sendProblem(
        request,
        reply,
        problem(
          'not-found',
          `No route ${request.method} ${request.routeOptions.url ?? request.url.split('?')[0]}`,
        ),
      );
    });
  },
  { name: 'atskills-errors' },
);
