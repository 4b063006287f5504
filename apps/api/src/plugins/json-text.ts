import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { problem } from '../problems.js';

// Routes whose bodies are not the hub's JSON inputs: webhook deliveries are verified raw bytes, and MCP
// answers its own JSON-RPC errors.
const OWN_BODIES = /^\/(?:mcp|v1\/webhooks\/)/;

/** The path (`note`, `items[2].identity`, ...) of the first string or key in `value` holding a NUL, or null. */
export function nulPath(value: unknown, at = ''): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? at || 'the body' : null;
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return null;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = nulPath(item, `${at}[${i}]`);
      if (found) return found;
    }
    return null;
  }
  for (const [key, item] of Object.entries(value)) {
    const path = at ? `${at}.${key}` : key;
    if (key.includes('\u0000')) return path;
    const found = nulPath(item, path);
    if (found) return found;
  }
  return null;
}

async function refuseNul(request: FastifyRequest): Promise<void> {
  if (request.body === undefined || OWN_BODIES.test(request.url)) return;
  const at = nulPath(request.body);
  if (at === null) return;
  throw problem(
    'bad-request',
    `${at} holds a NUL character (\\u0000); no text the hub stores or looks up may contain it.`,
    { reason: 'nul-character', field: at },
  );
}

/**
 * Refuses a NUL in any string of a JSON request body with a 400 problem naming the field, before route
 * validation: Postgres refuses it in text, so it would otherwise surface as a 500 from whichever query
 * meets it first (the URL has the same guard in app.ts).
 */
export default fp(
  async (app: FastifyInstance) => {
    app.addHook('preValidation', refuseNul);
  },
  { name: 'json-text' },
);
