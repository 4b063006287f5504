import type { FastifyInstance } from 'fastify';

/** An answer of `/mcp`: its status and its JSON-RPC body. */
export interface RpcAnswer {
  statusCode: number;
  headers: Record<string, unknown>;
  // biome-ignore lint/suspicious/noExplicitAny: JSON-RPC answers are checked field by field
  json: any;
}

let nextId = 1;

/** A JSON-RPC request of the MCP endpoint, numbered in order. */
export const rpcMessage = (method: string, params: unknown) => ({
  jsonrpc: '2.0',
  id: nextId++,
  method,
  params,
});

/** The `initialize` request an MCP client sends first. */
export const initializeMessage = () =>
  rpcMessage('initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'test', version: '1.0.0' },
  });

/** POSTs a JSON-RPC body to `/mcp` as a Streamable HTTP client does. */
export async function postMcp(
  app: FastifyInstance,
  body: unknown,
  headers: Record<string, string> = {},
  /** The body as sent, when it is not JSON to serialize (a malformed request). */
  raw?: string,
): Promise<RpcAnswer> {
  const res = await app.inject({
    method: 'POST',
    url: '/mcp',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    payload: raw ?? JSON.stringify(body),
  });
  return {
    statusCode: res.statusCode,
    headers: res.headers,
    json: res.body ? JSON.parse(res.body) : undefined,
  };
}
