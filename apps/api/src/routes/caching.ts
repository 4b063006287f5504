import type { FastifyReply, FastifyRequest } from 'fastify';

/** Cache-Control of a pinned (`?rev=`) answer: the content at a revision never changes. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';
/** The same for a private answer: only the caller's own cache may keep it, never a shared one. */
export const IMMUTABLE_PRIVATE = 'private, max-age=31536000, immutable';
/** Cache-Control of a current answer: store it, but revalidate with If-None-Match before each use. */
export const REVALIDATE = 'no-cache';

/**
 * Whether an If-None-Match header matches a strong ETag value (without quotes). RFC 9110 13.1.2: weak
 * comparison, a list of entity-tags, or `*`.
 */
export function ifNoneMatchHits(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const text = Array.isArray(header) ? header.join(',') : header;
  if (text.trim() === '*') return true;
  const tags = text.match(/(?:W\/)?"[^"]*"/g) ?? [];
  return tags.some((tag) => tag.replace(/^W\//, '') === `"${etag}"`);
}

/**
 * Sets ETag and Cache-Control for a revision and answers 304 when the client already holds it.
 * Returns true when the 304 was sent (the handler must stop).
 */
export function validateRevision(
  request: FastifyRequest,
  reply: FastifyReply,
  revision: string,
  pinned: boolean,
  isPrivate = false,
  vary = 'Authorization',
): boolean {
  reply.header('etag', `"${revision}"`);
  reply.header('cache-control', pinned ? (isPrivate ? IMMUTABLE_PRIVATE : IMMUTABLE) : REVALIDATE);
  reply.header('vary', vary);
  if (ifNoneMatchHits(request.headers['if-none-match'], revision)) {
    reply.code(304).send();
    return true;
  }
  return false;
}

/** Sends a body that is already JSON text as is (Fastify skips serialization for a string with a JSON type). */
export function sendJsonText(reply: FastifyReply, body: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(body);
}
