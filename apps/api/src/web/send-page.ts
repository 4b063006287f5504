import type { FastifyReply } from 'fastify';
import { CONTENT_SECURITY_POLICY } from './layout.js';

/**
 * Sends an HTML page with its status: the pages' content security policy, not cached, varying by caller
 * (and by whatever else chose the page, `vary`).
 */
export function sendPage(
  reply: FastifyReply,
  status: number,
  page: string,
  vary = 'Authorization',
): FastifyReply {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', CONTENT_SECURITY_POLICY)
    .header('cache-control', 'no-cache')
    .header('vary', vary)
    .send(page);
}
