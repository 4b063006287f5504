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
