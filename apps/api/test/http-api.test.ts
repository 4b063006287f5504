/** The HTTP surface: GET /search contract, engine fallback, and hostile input (always a 4xx problem, never 5xx). */
import { request as httpRequest } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { connectPostgres } from '@atskills/db';
import { extractReferences, SearchResponse } from '@atskills/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createTestHub, type TestHub } from './support/app.js';
import { seedRepository, skillMd } from './support/seed.js';

let hub: TestHub;
let base: string;

beforeAll(async () => {
  hub = await createTestHub('http_api');
  const files: Record<string, string> = {};
  for (let i = 0; i < 30; i++)
    files[`kit/tool-${i}/SKILL.md`] = skillMd(`tool-${i}`, `Gadget tool ${i} for builders`);
  files['kit/deploy/SKILL.md'] = skillMd('deploy', 'Deploy with care');
  files['kit/deploy/notes.md'] = '# Notes\n';
  await seedRepository(hub.db.db, 'acme', 'kit', files, { stars: 12 });
  await hub.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(hub.app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await hub?.close();
});

const get = (url: string, headers: Record<string, string> = {}) =>
  hub.app.inject({ method: 'GET', url, headers });

describe('the server', () => {
  it('sets every timeout (none is left at Node or Fastify defaults of "never")', () => {
    const server = hub.app.server;
    expect(server.timeout).toBe(120_000);
    expect(server.keepAliveTimeout).toBe(72_000);
    expect(server.requestTimeout).toBe(120_000);
    expect(hub.app.initialConfig.pluginTimeout).toBe(60_000);
  });
});

describe('GET /search', () => {
  it('answers results in the protocol shape with paste-ready references', async () => {
    for (const path of ['/search', '/v1/search']) {
      const res = await get(`${path}?q=deploy`);
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-search-engine']).toBe('postgres');
      const body = res.json();
      expect(SearchResponse.safeParse(body).success).toBe(true);
      const top = body.results[0];
      expect(top).toMatchObject({
        kind: 'skill',
        identity: 'gh:acme/kit/kit/deploy',
        name: 'deploy',
        source: 'gh',
        repository: 'acme/kit',
        path: 'kit/deploy',
        popularity: 12,
        stars: 12,
      });
      expect(top.descriptionTokens).toBeGreaterThan(0);
      expect(extractReferences(`use ${top.reference} now`)[0]?.identity).toBe(top.identity);
    }
  });

  it('pages with nextCursor until null', async () => {
    const seen: string[] = [];
    let url = '/search?q=gadget&limit=7';
    for (let i = 0; i < 20; i++) {
      const body = (await get(url)).json();
      seen.push(...body.results.map((r: { identity: string }) => r.identity));
      if (!body.nextCursor) break;
      url = `/search?q=gadget&limit=7&cursor=${encodeURIComponent(body.nextCursor)}`;
    }
    expect(seen.length).toBeGreaterThanOrEqual(30);
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('refuses bad input with a 400 problem', async () => {
    const cases: [string, string][] = [
      ['/search', 'bad-request'],
      ['/search?q=', 'bad-request'],
      ['/search?q=%20%20', 'bad-request'],
      [`/search?q=${'a'.repeat(257)}`, 'bad-request'],
      ['/search?q=x&limit=0', 'bad-request'],
      ['/search?q=x&limit=101', 'bad-request'],
      ['/search?q=x&limit=99999999999999999999', 'bad-request'],
      ['/search?q=x&limit=ten', 'bad-request'],
      ['/search?q=x&source=svn', 'bad-request'],
      ['/search?q=x&cursor=not-a-cursor', 'bad-cursor'],
      ['/search?q=x&cursor=eyJmIjoiYSIsInMiOiIxIiwiayI6ImIifQ', 'bad-cursor'],
    ];
    for (const [url, code] of cases) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(400);
      expect(res.headers['content-type'], url).toBe('application/problem+json; charset=utf-8');
      expect(res.json(), url).toMatchObject({
        status: 400,
        code,
        instance: expect.any(String),
        requestId: expect.any(String),
      });
    }
  });

  it('a query of exactly 256 characters is fine', async () => {
    expect((await get(`/search?q=${'a'.repeat(256)}`)).statusCode).toBe(200);
  });

  it('falls back to Postgres, and says so, when Meilisearch is configured but unreachable', async () => {
    const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', MEILI_URL: 'http://127.0.0.1:9' }), {
      database: hub.db,
    });
    try {
      const res = await app.inject({ url: '/search?q=deploy' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-search-engine']).toBe('postgres; fallback');
      expect(res.json().results[0].identity).toBe('gh:acme/kit/kit/deploy');
    } finally {
      await app.close();
    }
  });
});

/** A raw HTTP request, for what inject would normalize away (dot segments, huge headers). */
function raw(
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; type: string }> {
  return new Promise((resolve, reject) => {
    // host/port/path options, not a URL string: a URL would be normalized (dot segments resolved).
    const { hostname, port } = new URL(base);
    const req = httpRequest({ host: hostname, port, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString(),
          type: String(res.headers['content-type']),
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('hostile input', () => {
  it('answers 4xx problems, never 5xx, for malformed identities and paths', async () => {
    const urls = [
      '/v1/skills/gh:acme/kit/%zz',
      '/v1/skills/gh:acme/kit/%',
      '/v1/skills/gh:acme/kit/%00',
      '/v1/skills/gh:acme/kit/a%5Cb',
      `/v1/skills/gh:acme/kit/${'x'.repeat(5000)}`,
      '/v1/skills/',
      '/v1/skills/gh:',
      '/v1/skills/hub:',
      '/v1/skills/:::',
      '/v1/skills/gh:acme/kit/kit/deploy?rev=',
      `/v1/skills/gh:acme/kit/kit/deploy?rev=${'f'.repeat(500)}`,
      '/v1/archive/gh:acme/kit/%ZZ',
      '/v1/files/gh:acme/kit/kit/deploy?path=%2e%2e%2f%2e%2e%2fetc%2fpasswd',
      '/v1/files/gh:acme/kit/kit/deploy?path=notes.md%00.png',
      '/api/skills/%',
      '/api/skills?prefix=',
      '/api/skills?prefix=..%2F..%2F',
      '/v1/repos/%zz/x',
      `/v1/repos/${'a'.repeat(300)}/b`,
    ];
    for (const url of urls) {
      const res = await get(url);
      expect(res.statusCode, url).toBeGreaterThanOrEqual(400);
      expect(res.statusCode, url).toBeLessThan(500);
      expect(res.headers['content-type'], url).toBe('application/problem+json; charset=utf-8');
    }
    expect((await get('/v1/skills/gh:acme/kit/%zz')).json()).toMatchObject({
      code: 'bad-identity',
      reason: 'bad-percent-encoding',
    });
    expect((await get(`/v1/skills/gh:acme/kit/${'x'.repeat(5000)}`)).json()).toMatchObject({
      reason: 'too-long',
    });
    expect((await get('/v1/skills/gh:acme/kit/%00')).json()).toMatchObject({ reason: 'control-char' });
  });

  it('refuses dot segments that a normalizing client would have hidden', async () => {
    const res = await raw('/v1/skills/gh:acme/kit/../../etc');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'bad-identity', reason: 'dot-segment' });
    const file = await raw('/v1/files/gh:acme/kit/kit/deploy?path=../../SKILL.md');
    expect(file.status).toBe(400);
    expect(JSON.parse(file.body).code).toBe('bad-path');
  });

  it('refuses oversized headers with 431, and HTTP it cannot read with 400, as problems', async () => {
    const res = await raw('/search?q=x', { 'x-filler': 'a'.repeat(64 * 1024) });
    expect(res.status).toBe(431);
    expect(res.type).toBe('application/problem+json; charset=utf-8');
    expect(JSON.parse(res.body)).toMatchObject({ status: 431, code: 'headers-too-large' });
    // A tab in the request line: Node's parser refuses it before any route or hook runs.
    const { hostname, port } = new URL(base);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () =>
        socket.write('GET /v1/skills/hub:a/b/c\td HTTP/1.1\r\nHost: x\r\n\r\n'),
      );
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString();
      });
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    const [head = '', body = ''] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(head.toLowerCase()).toContain('content-type: application/problem+json');
    expect(JSON.parse(body)).toMatchObject({ status: 400, code: 'bad-request' });
  });

  it('refuses malformed, mistyped and oversized bodies with 4xx problems', async () => {
    const post = (payload: string, contentType = 'application/json') =>
      hub.app.inject({
        method: 'POST',
        url: '/v1/resolve',
        payload,
        headers: { 'content-type': contentType },
      });
    const cases: [Awaited<ReturnType<typeof post>>, number, string][] = [
      [await post('{"items": ['), 400, 'bad-request'],
      [await post(''), 400, 'bad-request'],
      [await post('null'), 400, 'bad-request'],
      [await post('{"items":[{"identity":42}]}'), 400, 'bad-request'],
      [await post('{"items":"x"}'), 400, 'bad-request'],
      [await post('items=1', 'application/x-www-form-urlencoded'), 415, 'unsupported-media-type'],
      [
        await post(JSON.stringify({ items: [{ identity: 'x'.repeat(2 * 1024 * 1024) }] })),
        413,
        'payload-too-large',
      ],
      [
        await post('{"__proto__":{"polluted":true},"items":[{"identity":"gh:acme/kit"}]}'),
        400,
        'bad-request',
      ],
    ];
    for (const [res, status, code] of cases) {
      expect(res.statusCode, res.body).toBe(status);
      expect(res.json().code).toBe(code);
      expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('answers unknown routes and methods with problems and echoes a safe request id', async () => {
    const res = await get('/v2/nothing', { 'x-request-id': 'abc-123' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ code: 'not-found', requestId: 'abc-123' });
    expect(res.headers['x-request-id']).toBe('abc-123');
    const evil = await get('/v2/nothing', { 'x-request-id': '<script>' });
    expect(evil.json().requestId).not.toContain('<');
    const del = await hub.app.inject({ method: 'DELETE', url: '/v1/skills/gh:acme/kit' });
    expect(del.statusCode).toBeGreaterThanOrEqual(400);
    expect(del.statusCode).toBeLessThan(500);
  });

  it('turns a database outage into 503 with Retry-After and no internals', async () => {
    // A database server that is down: nothing listens on port 1.
    const down = connectPostgres({
      url: 'postgres://postgres@127.0.0.1:1/atskills',
      connectionTimeoutMs: 1_000,
    });
    const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent' }), { database: down });
    try {
      const res = await app.inject({ url: '/v1/skills/gh:acme/kit' });
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.json()).toMatchObject({ code: 'unavailable', status: 503 });
      expect(res.body).not.toMatch(/pool|ECONN|terminat|postgres/i);
    } finally {
      await app.close();
      await down.close();
    }
  });
});
