import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyPluginAsync } from 'fastify';
import { problem } from '../../problems.js';
import { buildMcpServer } from '../../services/mcp-server.js';

const MCP_VERSION = '1.0.0';

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
      schema: {
        operationId: 'mcp',
        tags: ['agents'],
        summary:
          'MCP (Streamable HTTP, stateless): tools search_skills, resolve_skill, read_skill_file, resolve_batch',
        description:
          'JSON-RPC 2.0 over POST with Accept: application/json, text/event-stream. Authorization: Bearer <token> reads private skills as on REST.',
      },
    },
    async (request, reply) => {
      const server = buildMcpServer({
        db: app.db,
        searchEngine: app.searchEngine,
        suggestEngine: app.suggestEngine,
        viewer: request.viewer,
        version: MCP_VERSION,
        noteUse: (identity) => app.noteUse(request, identity),
      });
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      reply.hijack();
      reply.raw.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(request.raw, reply.raw, request.body);
    },
  );

  // Stateless: no server-sent event stream to open and no session to end.
  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '/mcp',
      schema: { hide: true },
      handler: async (_request, reply) => {
        reply.header('allow', 'POST');
        throw problem('method-not-allowed', 'This MCP server is stateless: POST JSON-RPC messages to /mcp.');
      },
    });
  }
};

export default mcpRoutes;
