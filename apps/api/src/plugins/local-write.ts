import type { FastifyReply, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A POST/PUT/PATCH/DELETE route that writes nothing (/v1/suggest, /v1/resolve): no index is dirtied. */
    readOnly?: boolean;
  }
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Whether the request wrote through this process: a write method on a route not marked `readOnly`, answered
 * below 400. The read cache, the in-memory index and the suggestion model follow such a write at once
 * instead of waiting for the change feed's NOTIFY.
 */
export function wroteThroughThisProcess(request: FastifyRequest, reply: FastifyReply): boolean {
  return WRITE_METHODS.has(request.method) && !request.routeOptions.config.readOnly && reply.statusCode < 400;
}
