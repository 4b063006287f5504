/**
 * /mcp as a transport: what any JSON-RPC client or browser meets before a tool runs. Malformed messages are
 * JSON-RPC errors, and the answers carry the headers every REST answer carries (CORS, rate-limit state, the
 * request id), which a hijacked reply used to drop.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadOpsConfig } from '../src/runtime/ops-config.js';
import { createTestHub, type TestHub } from './support/app.js';
import { postMcp, rpcMessage } from './support/mcp.js';

let hub: TestHub;

beforeAll(async () => {
  hub = await createTestHub(
    'mcp_transport',
    {},
    { ops: { config: loadOpsConfig({ CORS_ORIGINS: '*', RATE_LIMIT_MAX: '1000' }) } },
  );
  await hub.app.ready();
});
afterAll(async () => hub?.close());

describe('the MCP transport', () => {
  it('answers with the request id, CORS and rate-limit headers REST answers carry', async () => {
    const answer = await postMcp(hub.app, rpcMessage('ping', {}), {
      origin: 'https://agent.example',
      'x-request-id': 'trace-42',
    });
    expect(answer.statusCode).toBe(200);
    expect(answer.json.result).toEqual({});
    expect(answer.headers['x-request-id']).toBe('trace-42');
    expect(answer.headers['access-control-allow-origin']).toBe('*');
    expect(answer.headers['ratelimit-remaining']).toBeDefined();
    const preflight = await hub.app.inject({
      method: 'OPTIONS',
      url: '/mcp',
      headers: {
        origin: 'https://agent.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, mcp-protocol-version',
      },
    });
    expect(String(preflight.headers['access-control-allow-headers'])).toContain('mcp-protocol-version');
  });

  it('answers a body that is not JSON with -32700 and an empty batch with -32600', async () => {
    const garbled = await postMcp(hub.app, undefined, {}, '{"jsonrpc":');
    expect(garbled.statusCode).toBe(400);
    expect(garbled.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    const empty = await postMcp(hub.app, []);
    expect(empty.statusCode).toBe(400);
    expect(empty.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
  });

  it('answers valid JSON that is no JSON-RPC 2.0 message with -32600 naming why, never -32700', async () => {
    const cases: [unknown, string][] = [
      [{ jsonrpc: '2.0', id: 14 }, 'no "method"'],
      [{ jsonrpc: '1.0', id: 1, method: 'ping' }, '"jsonrpc" must be "2.0"'],
      [{ jsonrpc: '2.0', id: 2, method: 'ping', params: [1, 2] }, '"params" must be an object'],
      [{ jsonrpc: '2.0', id: true, method: 'ping' }, '"id" must be a string or an integer'],
      [5, 'not a JSON object'],
      [[rpcMessage('ping', {}), { jsonrpc: '2.0' }], 'message 2 of the batch'],
    ];
    for (const [body, says] of cases) {
      const answer = await postMcp(hub.app, body);
      expect(answer.statusCode, says).toBe(400);
      expect(answer.json, says).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
      expect(answer.json.error.message, says).toContain(says);
    }
  });

  it('answers bad params of the SDK-handled methods with -32602 and one readable line', async () => {
    const cases: [unknown, string][] = [
      [{ jsonrpc: '2.0', id: 17, method: 'tools/call' }, 'tools/call: params:'],
      [{ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 5 } }, 'tools/call: params.name:'],
      [{ jsonrpc: '2.0', id: 1, method: 'initialize' }, 'initialize: params:'],
      [{ jsonrpc: '2.0', id: 3, method: 'initialize', params: {} }, 'initialize: params.'],
      [{ jsonrpc: '2.0', id: 4, method: 'tools/list', params: { cursor: 5 } }, 'tools/list: params.cursor:'],
    ];
    for (const [body, says] of cases) {
      const answer = await postMcp(hub.app, body);
      expect(answer.statusCode, says).toBe(200);
      expect(answer.json, says).toMatchObject({
        jsonrpc: '2.0',
        id: (body as { id: number }).id,
        error: { code: -32602, message: expect.stringContaining(says) },
      });
      expect(answer.json.error.message, says).not.toContain('\n');
    }
    // In a batch the refused message is answered alone; the others still run.
    const batch = await postMcp(hub.app, [
      { jsonrpc: '2.0', id: 'bad', method: 'tools/call', params: { name: 5 } },
      { jsonrpc: '2.0', id: 'good', method: 'tools/list', params: {} },
    ]);
    expect(batch.statusCode).toBe(200);
    const byId = new Map(batch.json.map((m: { id: string }) => [m.id, m]));
    expect(byId.get('bad')).toMatchObject({ error: { code: -32602 } });
    expect(byId.get('good')).toMatchObject({ result: { tools: expect.any(Array) } });
    // A method the server does not serve is still -32601, whatever its params.
    const unknown = await postMcp(hub.app, rpcMessage('prompts/get', { name: 5 }));
    expect(unknown.json.error.code).toBe(-32601);
  });

  it('answers each status openapi.yaml declares for it, with the body it declares', async () => {
    // biome-ignore lint/suspicious/noExplicitAny: the document is read field by field
    const documented: any = hub.app.swagger().paths?.['/mcp']?.post?.responses ?? {};
    const notAcceptable = await postMcp(hub.app, rpcMessage('ping', {}), { accept: 'text/html' });
    const wrongType = await hub.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { 'content-type': 'text/plain', accept: 'application/json, text/event-stream' },
      payload: 'ping',
    });
    const badToken = await postMcp(hub.app, rpcMessage('ping', {}), { authorization: 'Bearer nope' });
    expect(notAcceptable.statusCode).toBe(406);
    expect(notAcceptable.json).toMatchObject({ jsonrpc: '2.0', error: { code: expect.any(Number) } });
    expect(badToken.statusCode).toBe(401);
    expect(badToken.headers['content-type']).toContain('application/problem+json');
    for (const status of [200, 400, 401, 406, 413, 415, 429, wrongType.statusCode]) {
      expect(Object.keys(documented)).toContain(String(status));
    }
    expect(Object.keys(documented['400'].content)).toEqual(['application/json']);
    expect(Object.keys(documented['401'].content)).toEqual(['application/problem+json']);
  });
});
