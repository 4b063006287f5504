import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { loggableError, toProblem } from '../../plugins/errors.js';
import { problem } from '../../problems.js';
import { problems } from '../../schemas.js';
import { withMissingGh } from '../../services/indexing/missing-gh.js';
import {
  buildMcpServer,
  connectMcpServer,
  MCP_MAX_BATCH,
  MCP_MAX_ITEMS,
  mcpMessageCost,
} from '../../services/mcp-server.js';
import { prefersPage, renderErrorPage } from '../../web/pages/error-page.js';
import { sendPage } from '../../web/send-page.js';

const MCP_VERSION = '1.0.0';

/** A JSON-RPC error answer as /mcp and its transport send it when they refuse a request as a whole. */
const JsonRpcRefusal = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number(), z.null()]),
  error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }),
});

/**
 * /mcp: the Model Context Protocol server on the Streamable HTTP transport, stateless (a server and a
 * transport per POST, answered as JSON): no session to keep, and each request's bearer token, rate limit
 * and viewer apply exactly as on REST, since it goes through the same hooks before reaching here.
 */
const mcpRoutes: FastifyPluginAsync = async (app) => {
  app.post(
    '/mcp',
    {
      // Tool calls only read: they must not drop the read cache (plugins/read-cache.ts).
      config: { readOnly: true },
      // A body that is not JSON is a JSON-RPC parse error (-32700), not the REST routes' problem.
      errorHandler: (error, _request, reply) => {
        if ((error as { code?: string }).code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
          return reply.code(400).send(jsonRpcError(-32700, `Parse error: ${error.message}.`));
        }
        // Anything else goes on to the hub's error handler (a problem, logged as every route's is).
        throw error;
      },
      schema: {
        operationId: 'mcp',
        tags: ['agents'],
        summary:
          'MCP (Streamable HTTP, stateless): tools search_skills, suggest_skills, resolve_skill, read_skill_file, resolve_batch, and the skills extension (skills/list, skills/get, resources/read on skill:// URIs)',
        description:
          'JSON-RPC 2.0 over POST with Accept: application/json, text/event-stream. Authorization: Bearer <token> reads private skills as on REST. A batch holds at most 16 messages and 256 resolutions; each resolution counts against the rate limit.',
        response: {
          200: z.unknown().describe('The JSON-RPC answer, or a batch of answers, as application/json'),
          400: JsonRpcRefusal.describe(
            'A body that is not JSON (-32700); JSON that is no JSON-RPC 2.0 message, an empty or over-long batch or more than 256 resolutions (-32600)',
          ),
          406: JsonRpcRefusal.describe('Accept names neither application/json nor text/event-stream'),
          415: JsonRpcRefusal.describe('Content-Type is not application/json'),
          ...problems(401, 413, 429),
        },
      },
    },
    async (request, reply) => {
      // A JSON-RPC batch is bounded, and every resolution it asks for is charged against the caller's rate
      // limit before any runs (the request itself paid one on arrival): one POST of 100 resolve_batch calls
      // once did 12,800 resolutions for the price of one request.
      const messages = Array.isArray(request.body) ? (request.body as unknown[]) : [request.body];
      if (messages.length === 0) {
        return reply
          .code(400)
          .send(jsonRpcError(-32600, 'Invalid Request: an empty batch holds no message.'));
      }
      if (messages.length > MCP_MAX_BATCH) {
        return reply
          .code(400)
          .send(
            jsonRpcError(
              -32600,
              `A JSON-RPC batch may hold at most ${MCP_MAX_BATCH} messages; this one holds ${messages.length}. Send the rest in further requests.`,
            ),
          );
      }
      // Valid JSON that is no JSON-RPC message is an invalid request (-32600); the SDK's transport would call
      // it a parse error (-32700), which JSON-RPC keeps for a body that is not JSON.
      const malformed = messages.findIndex((message) => !JSONRPCMessageSchema.safeParse(message).success);
      if (malformed >= 0) {
        const which = Array.isArray(request.body) ? `message ${malformed + 1} of the batch: ` : '';
        return reply
          .code(400)
          .send(jsonRpcError(-32600, `Invalid Request: ${which}${whyNotJsonRpc(messages[malformed])}.`));
      }
      const cost = messages.reduce<number>((sum, message) => sum + mcpMessageCost(message), 0);
      if (cost > MCP_MAX_ITEMS) {
        return reply
          .code(400)
          .send(
            jsonRpcError(
              -32600,
              `One request may ask for at most ${MCP_MAX_ITEMS} resolutions; this one asks for ${cost}. Send the rest in further requests.`,
            ),
          );
      }
      await app.chargeRateLimit(request, reply, cost - 1);
      const server = buildMcpServer({
        db: app.db,
        searchEngine: app.searchEngine,
        suggestEngine: app.suggestEngine,
        viewer: request.viewer,
        version: MCP_VERSION,
        hubUrl: app.config.publicUrl,
        noteUse: (identity) => app.noteUse(request, identity),
        withMissingGh: (identity, read) => withMissingGh(app, request, identity, read),
        // As the REST routes log a 5xx: a database error by its driver's words, never the SQL and its values.
        logError: (error) => request.log.error({ err: loggableError(error) }, 'MCP tool call failed'),
        problemOf: toProblem,
      });
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      // A hijacked reply skips Fastify's sending and its onSend hooks: the headers set so far (CORS, rate-limit
      // state, security headers) and the request id are written onto the raw response before the transport's.
      reply.header('x-request-id', request.id);
      for (const [name, value] of Object.entries(reply.getHeaders())) {
        if (value !== undefined) reply.raw.setHeader(name, value);
      }
      reply.hijack();
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      await connectMcpServer(server, transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    },
  );

  // Stateless: no server-sent event stream to open and no session to end.
  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '/mcp',
      schema: { hide: true },
      handler: async (request, reply) => {
        reply.header('allow', 'POST');
        // The home page links here: a browser gets a page saying what the endpoint is for.
        if (method === 'GET' && prefersPage(request.headers.accept)) {
          return sendPage(
            reply,
            405,
            renderErrorPage({
              status: 405,
              code: 'method-not-allowed',
              title: "This is the hub's MCP server",
              detail: `/mcp speaks the Model Context Protocol (Streamable HTTP, stateless): an MCP client POSTs JSON-RPC messages to it. Add ${app.config.publicUrl}/mcp to your agent's MCP servers; shell agents read ${app.config.publicUrl}/SKILLS.md instead.`,
              requestId: request.id,
            }),
          );
        }
        throw problem('method-not-allowed', 'This MCP server is stateless: POST JSON-RPC messages to /mcp.');
      },
    });
  }
};

/** Why `message`, which the MCP schema refuses, is no JSON-RPC 2.0 request, notification or answer. */
function whyNotJsonRpc(message: unknown): string {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) {
    return 'it is not a JSON object';
  }
  const fields = message as Record<string, unknown>;
  if (fields.jsonrpc !== '2.0') return '"jsonrpc" must be "2.0"';
  if ('id' in fields && typeof fields.id !== 'string' && !Number.isInteger(fields.id)) {
    return '"id" must be a string or an integer';
  }
  if (!('method' in fields)) {
    return 'result' in fields || 'error' in fields
      ? 'an answer needs an "id" and an object "result", or an "error" with an integer "code" and a "message"'
      : 'it has no "method"';
  }
  if (typeof fields.method !== 'string') return '"method" must be a string';
  if (
    'params' in fields &&
    (typeof fields.params !== 'object' || fields.params === null || Array.isArray(fields.params))
  ) {
    return '"params" must be an object (MCP passes params by name)';
  }
  const extra = Object.keys(fields).filter((key) => !['jsonrpc', 'id', 'method', 'params'].includes(key));
  if (extra.length) return `it holds members a request may not hold: ${extra.join(', ')}`;
  return 'it is no JSON-RPC 2.0 request, notification or answer';
}

/** A JSON-RPC error answer not tied to one request id (the request as a whole is refused). */
function jsonRpcError(code: number, message: string) {
  return { jsonrpc: '2.0', id: null, error: { code, message } };
}

export default mcpRoutes;
