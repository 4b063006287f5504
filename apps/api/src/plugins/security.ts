import { constants as zlibConstants } from 'node:zlib';
import { SUGGEST_TIMEOUT_HEADER } from '@atskills/protocol';
import fastifyCompress from '@fastify/compress';
import fastifyCors from '@fastify/cors';
import fastifyHelmet from '@fastify/helmet';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

export interface SecurityOptions {
  /** Origins browsers may call the API from: `['*']` (any, the default: the API is token-authenticated, never cookies) or exact origins. */
  corsOrigins: readonly string[];
  /** The public address of the hub; HTTPS turns on upgrade-insecure-requests. */
  publicUrl: string;
}

// Response headers a browser client needs to read: revision validators, digests, rate-limit state, the id to quote.
const EXPOSED_HEADERS = [
  'etag',
  'content-digest',
  'retry-after',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'x-request-id',
  // The status URL of a gh: repository whose indexing a read started (services/indexing/missing-gh.ts).
  'link',
  // Where a 202 index request or crawl is followed (GET /v1/repos/..., /v1/crawls/...).
  'location',
  // The safety signal of a skill, on its 200 and 304 alike (docs/api.md): a client must see it to warn.
  'x-skill-flags',
  // Which engine answered a search (docs/search.md): a browser client could not read it before.
  'x-search-engine',
];

async function noSniff(_request: FastifyRequest, reply: FastifyReply): Promise<void> {
  reply.header('x-content-type-options', 'nosniff');
}

/**
 * Route options of the hottest JSON reads (revision probes, search, batch resolve). Helmet's document
 * headers (CSP, frame, opener and embedder policies, ...) guard pages a browser renders, not JSON a client
 * parses; on a 304 probe they were two thirds of the answer's bytes and a tenth of its CPU. These answers
 * keep `X-Content-Type-Options: nosniff`, so a browser never sniffs them into something it would render.
 */
export const leanJsonRoute = { helmet: false, onRequest: noSniff } as const;

/** leanJsonRoute for a route with an onRequest hook of its own (run after nosniff is set). */
export function leanJsonRouteWith(
  onRequest: (request: FastifyRequest, reply: FastifyReply) => Promise<void>,
) {
  return { helmet: false as const, onRequest: [noSniff, onRequest] };
}

/** Security headers (helmet), CORS for browser clients and response compression. */
export default fp(
  async function securityPlugin(app: FastifyInstance, options: SecurityOptions) {
    const https = options.publicUrl.startsWith('https:');
    await app.register(fastifyHelmet, {
      contentSecurityPolicy: {
        directives: {
          // Over plain http (the one-command local start) upgrading subresources to https would break the page.
          upgradeInsecureRequests: https ? [] : null,
          // Swagger UI (/docs) validates the document against this badge service; nothing else loads from afar.
          imgSrc: ["'self'", 'data:', 'https:'],
        },
      },
      // HSTS only means something over https; sending it on http://127.0.0.1 would be noise.
      hsts: https,
      // The API is read by other origins' scripts (CORS); CORP same-origin would block them.
      crossOriginResourcePolicy: { policy: 'cross-origin' },
    });
    const anyOrigin = options.corsOrigins.includes('*');
    await app.register(fastifyCors, {
      origin: anyOrigin ? '*' : [...options.corsOrigins],
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS'],
      // Request headers a browser client may send: a token, JSON bodies, revision probes, an id to join logs
      // on, how long it waits for a suggestion (SPEC 2.7) and MCP's own (a header left out here fails the
      // preflight).
      allowedHeaders: [
        'authorization',
        'content-type',
        'if-none-match',
        'x-request-id',
        'accept',
        SUGGEST_TIMEOUT_HEADER,
        // What an MCP client sends on /mcp after initialize (Streamable HTTP).
        'mcp-protocol-version',
        'mcp-session-id',
      ],
      exposedHeaders: EXPOSED_HEADERS,
      maxAge: 600,
    });
    // Tars are gzip already and small bodies gain nothing; compress text (JSON, HTML, markdown) over 1 KiB.
    await app.register(fastifyCompress, {
      global: true,
      threshold: 1024,
      encodings: ['br', 'gzip', 'deflate'],
      // zlib's brotli default is quality 11, made for static assets compressed once: ~4-5 ms for a 16 KiB
      // search page, which was most of the API's time over its SQL. Quality 4 takes ~0.1 ms and still
      // compresses JSON better than gzip.
      brotliOptions: { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 4 } },
    });
  },
  { name: 'atskills-security' },
);
