// The client's node:http requests against in-test servers: redirects as fetch follows them, decoded
// Content-Encoding, the body limit, and each way of getting no answer. No assertion depends on timing: the
// silent server never answers, so the request can only end by its deadline.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpRequestError, headerOf, httpRequest } from './http-request.js';

interface Seen {
  method: string;
  url: string;
  authorization?: string;
  body: string;
}

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A server on 127.0.0.1 that records every request and answers with `handler`. */
async function serve(handler: Handler): Promise<{ server: Server; url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const entry: Seen = { method: req.method ?? '', url: req.url ?? '', body };
      if (req.headers.authorization) entry.authorization = req.headers.authorization;
      seen.push(entry);
      handler(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const BIG = Buffer.alloc(64 * 1024, 'a');
let main: Awaited<ReturnType<typeof serve>>;
let other: Awaited<ReturnType<typeof serve>>;

beforeAll(async () => {
  other = await serve((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('elsewhere'));
  main = await serve((req, res, body) => {
    switch (req.url) {
      case '/hop':
        return res.writeHead(307, { location: '/json' }).end();
      case '/away':
        return res.writeHead(302, { location: `${other.url}/landed` }).end();
      case '/see-other':
        return res.writeHead(303, { location: '/json' }).end();
      case '/json':
        return res
          .writeHead(200, { 'content-type': 'application/json', etag: '"r1"' })
          .end(JSON.stringify({ method: req.method, body }));
      case '/not-modified':
        return res.writeHead(304, { etag: '"r1"' }).end();
      case '/gzip':
        return res.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync('zipped'));
      case '/br':
        return res.writeHead(200, { 'content-encoding': 'br' }).end(brotliCompressSync('brotli'));
      case '/big-declared':
        return res.writeHead(200, { 'content-length': String(BIG.length) }).end(BIG);
      case '/big-chunked':
        res.writeHead(200);
        res.write(BIG.subarray(0, 32 * 1024));
        return res.end(BIG.subarray(32 * 1024));
      case '/bomb':
        return res.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync(BIG));
      case '/cut':
        // Promises more than it sends, then drops the connection.
        res.writeHead(200, { 'content-length': '1000' });
        res.write('only some');
        return setImmediate(() => res.socket?.destroy());
      case '/silent':
        return; // never answers
      default:
        return res.writeHead(404).end();
    }
  });
});
afterAll(async () => {
  for (const s of [main?.server, other?.server]) {
    s?.closeAllConnections();
    await new Promise<void>((r) => (s ? s.close(() => r()) : r()));
  }
});

async function failure(promise: Promise<unknown>): Promise<HttpRequestError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof HttpRequestError) return error;
    throw error;
  }
  throw new Error('expected the request to fail');
}

describe('httpRequest', () => {
  it('answers with status, headers and body; a 304 has an empty body', async () => {
    const ok = await httpRequest(`${main.url}/json`, { timeoutMs: 5000 });
    expect(ok).toMatchObject({ status: 200, ok: true, url: `${main.url}/json` });
    expect(headerOf(ok, 'ETag')).toBe('"r1"');
    expect(JSON.parse(ok.body.toString('utf8'))).toEqual({ method: 'GET', body: '' });
    const same = await httpRequest(`${main.url}/not-modified`, {
      headers: { 'if-none-match': '"r1"' },
      timeoutMs: 5000,
    });
    expect(same).toMatchObject({ status: 304, ok: false });
    expect(same.body.length).toBe(0);
  });

  it('sends a PUT body and keeps the method through a 307', async () => {
    const put = await httpRequest(`${main.url}/hop`, {
      method: 'PUT',
      body: Buffer.from('payload'),
      timeoutMs: 5000,
    });
    expect(put.url).toBe(`${main.url}/json`);
    expect(JSON.parse(put.body.toString('utf8'))).toEqual({ method: 'PUT', body: 'payload' });
  });

  it('turns a 303 into a GET without the body', async () => {
    const seeOther = await httpRequest(`${main.url}/see-other`, {
      method: 'PUT',
      body: Buffer.from('payload'),
      timeoutMs: 5000,
    });
    expect(JSON.parse(seeOther.body.toString('utf8'))).toEqual({ method: 'GET', body: '' });
  });

  it('carries Authorization within the origin only', async () => {
    main.seen.length = 0;
    other.seen.length = 0;
    const auth = { authorization: 'Bearer secret' };
    await httpRequest(`${main.url}/hop`, { headers: auth, timeoutMs: 5000 });
    expect(main.seen.map((s) => [s.url, s.authorization])).toEqual([
      ['/hop', 'Bearer secret'],
      ['/json', 'Bearer secret'],
    ]);
    const away = await httpRequest(`${main.url}/away`, { headers: auth, timeoutMs: 5000 });
    expect(away.body.toString('utf8')).toBe('elsewhere');
    expect(other.seen).toEqual([{ method: 'GET', url: '/landed', body: '' }]);
  });

  it('decodes gzip and br bodies', async () => {
    expect((await httpRequest(`${main.url}/gzip`, { timeoutMs: 5000 })).body.toString()).toBe('zipped');
    expect((await httpRequest(`${main.url}/br`, { timeoutMs: 5000 })).body.toString()).toBe('brotli');
  });

  it('refuses bodies over the limit: declared, streamed, or once decoded', async () => {
    const limit = { timeoutMs: 5000, maxBodyBytes: 1024 };
    for (const route of ['/big-declared', '/big-chunked', '/bomb']) {
      const error = await failure(httpRequest(`${main.url}${route}`, limit));
      expect(error.code, route).toBe('too-large');
    }
    // Under a limit that fits, the same bodies are answers.
    const roomy = { timeoutMs: 5000, maxBodyBytes: BIG.length };
    expect((await httpRequest(`${main.url}/bomb`, roomy)).body.equals(BIG)).toBe(true);
  });

  it('fails as unreachable: refused, cut short, or silent past the deadline', async () => {
    const closed = await serve(() => {});
    await new Promise<void>((r) => closed.server.close(() => r()));
    const refused = await failure(httpRequest(`${closed.url}/`, { timeoutMs: 5000 }));
    expect(refused.code).toBe('unreachable');
    expect(refused.message).toContain('ECONNREFUSED');
    const cut = await failure(httpRequest(`${main.url}/cut`, { timeoutMs: 5000 }));
    expect(cut.code).toBe('unreachable');
    const silent = await failure(httpRequest(`${main.url}/silent`, { timeoutMs: 200 }));
    expect(silent).toMatchObject({ code: 'unreachable', message: 'no complete answer within 0.2 s' });
  });
});
