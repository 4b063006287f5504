import type { FastifyReply } from 'fastify';
import { CONTENT_SECURITY_POLICY } from './layout.js';

/** Sends an HTML page with its status: the pages' content security policy, not cached, varying by caller. */
export function sendPage(reply: FastifyReply, status: number, page: string): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', CONTENT_SECURITY_POLICY)
    .header('cache-control', 'no-cache')
    .header('vary', 'Authorization')
    .send(page);
}
