/**
 * What /v1/suggest answers to requests it cannot serve (SPEC 2.7; Part 2: problems with a stable code): a
 * body that is not JSON is a 415 whatever its type, each 400 says what to change, `limit` is read as
 * /v1/search reads its own, a browser may send the documented atskills-timeout-ms header, and the OpenAPI
 * document declares exactly the statuses the routes give, with every parameter described.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadOpsConfig } from '../src/runtime/ops-config.js';
import { SuggestUnavailableError } from '../src/suggest/engine.js';
import { createTestHub, type TestHub } from './support/app.js';
import { seedRepository, skillMd } from './support/seed.js';

let hub: TestHub;

beforeAll(async () => {
  hub = await createTestHub('suggest_input', { SEARCH_ENGINE: 'memory' });
  await seedRepository(hub.db.db, 'devtools', 'skills', {
    'release-notes/SKILL.md': skillMd(
      'release-notes',
      'Write release notes and a changelog from the git commits since the last tag',
    ),
  });
  await hub.app.ready();
  await hub.app.suggestEngine.build();
}, 120_000);

afterAll(async () => {
  await hub?.close();
});

const get = (query: string, headers: Record<string, string> = {}) =>
  hub.app.inject({ url: `/v1/suggest?${query}`, headers });
const post = (payload: string, contentType?: string, headers: Record<string, string> = {}) =>
  hub.app.inject({
    method: 'POST',
    url: '/v1/suggest',
    payload,
    headers: { ...(contentType === undefined ? {} : { 'content-type': contentType }), ...headers },
  });

/** The problem a refused request answers: its status, code and detail. */
function refusal(res: Awaited<ReturnType<typeof get>>) {
  expect(res.headers['content-type'], res.body).toBe('application/problem+json; charset=utf-8');
  const { status, code, detail } = res.json() as { status: number; code: string; detail: string };
  expect(status).toBe(res.statusCode);
  return { status, code, detail };
}

describe('POST /v1/suggest bodies', () => {
  it('refuses every body that is not JSON, text/plain included, with a 415 saying to send JSON', async () => {
    for (const [contentType, payload] of [
      ['text/plain', 'write release notes'],
      ['text/plain; charset=utf-8', '{"message": "write release notes"}'],
      ['application/xml', '<message>write release notes</message>'],
      ['application/x-www-form-urlencoded', 'message=write+release+notes'],
      ['', 'write release notes'],
    ] as const) {
      const answer = refusal(await post(payload, contentType));
      expect(answer.status, contentType).toBe(415);
      expect(answer.code).toBe('unsupported-media-type');
      expect(answer.detail).toContain('The body must be JSON (content-type application/json)');
    }
    // JSON that is no object is a bad request, as before; JSON with a charset is JSON.
    expect(refusal(await post('"write release notes"', 'application/json')).status).toBe(400);
    const fine = await post(
      JSON.stringify({ message: 'write release notes' }),
      'application/json; charset=utf-8',
    );
    expect(fine.statusCode, fine.body).toBe(200);
  });

  it('says the message is empty, or how long it may be', async () => {
    const blank = refusal(await post(JSON.stringify({ message: ' \n\t ' }), 'application/json'));
    expect(blank).toMatchObject({ status: 400, code: 'bad-request' });
    expect(blank.detail).toContain('the message is empty');
    const long = refusal(await post(JSON.stringify({ message: 'x'.repeat(8_001) }), 'application/json'));
    expect(long.detail).toContain('the message is longer than 8,000 characters');
    for (const limit of [0, 11, 2.5, '3']) {
      const answer = refusal(
        await post(JSON.stringify({ message: 'release notes', limit }), 'application/json'),
      );
      expect(answer.status, String(limit)).toBe(400);
      expect(answer.detail).toContain('limit must be a whole number from 1 to 10');
    }
  });
});

describe('GET /v1/suggest', () => {
  it('says a long message goes by POST, and an empty one is empty', async () => {
    const long = refusal(await get(`q=${'a'.repeat(2_001)}`));
    expect(long.status).toBe(400);
    expect(long.detail).toContain('longer than 2,000 characters');
    expect(long.detail).toContain('by POST {"message"} (up to 8,000 characters)');
    expect((await get(`q=${'a '.repeat(1_000)}`)).statusCode).toBe(200);
    for (const q of ['', '%20%20', '%0A%09']) {
      const answer = refusal(await get(`q=${q}`));
      expect(answer.status, q).toBe(400);
      expect(answer.detail).toContain('the message is empty');
    }
  });

  it('says limit must be a whole number from 1 to 10, and reads it as /v1/search reads its own', async () => {
    for (const limit of ['', '%20', 'abc', '0', '11', '2.5', '-1']) {
      const answer = refusal(await get(`q=release+notes&limit=${limit}`));
      expect(answer.status, limit).toBe(400);
      expect(answer.detail).toContain('limit must be a whole number from 1 to 10');
    }
    // Not stricter than search: what /v1/search takes as a number in range, suggest takes too.
    for (const limit of ['0x5', '1e1', '%203', '3%20', '05']) {
      const search = await hub.app.inject({ url: `/v1/search?q=release&limit=${limit}` });
      expect(search.statusCode, `search ${limit}`).toBe(200);
      expect((await get(`q=release+notes&limit=${limit}`)).statusCode, limit).toBe(200);
    }
  });
});

describe('CORS', () => {
  it('lets a browser send atskills-timeout-ms (and a JSON body) in a suggestion', async () => {
    for (const method of ['GET', 'POST']) {
      const preflight = await hub.app.inject({
        method: 'OPTIONS',
        url: '/v1/suggest',
        headers: {
          origin: 'https://app.example',
          'access-control-request-method': method,
          'access-control-request-headers': 'content-type,atskills-timeout-ms',
        },
      });
      expect(preflight.statusCode).toBe(204);
      const allowed = String(preflight.headers['access-control-allow-headers'])
        .split(',')
        .map((h) => h.trim().toLowerCase());
      expect(allowed).toContain('atskills-timeout-ms');
      expect(allowed).toContain('content-type');
      expect(String(preflight.headers['access-control-allow-methods'])).toContain(method);
    }
  });
});

describe('the OpenAPI document', () => {
  it('describes q, limit and message', async () => {
    const doc = (await hub.app.inject({ url: '/openapi.json' })).json();
    const parameters: { name: string; in: string; description?: string }[] =
      doc.paths['/v1/suggest'].get.parameters;
    for (const name of ['q', 'limit']) {
      const parameter = parameters.find((p) => p.name === name && p.in === 'query');
      expect(parameter?.description, name).toBeTruthy();
    }
    const body = doc.paths['/v1/suggest'].post.requestBody.content['application/json'].schema;
    expect(body.properties.message.description).toContain('8,000 characters');
    expect(body.properties.limit.description).toContain('1-10');
  });

  it('declares exactly the error statuses each route gives', async () => {
    const limited = await createTestHub(
      'suggest_input_rate',
      { SEARCH_ENGINE: 'memory' },
      { ops: { config: loadOpsConfig({ RATE_LIMIT_MAX: '1' }) } },
    );
    const unavailable = vi
      .spyOn(hub.app.suggestEngine, 'suggest')
      .mockRejectedValue(new SuggestUnavailableError('the suggestion model is still building', 30));
    try {
      const json = 'application/json';
      const message = JSON.stringify({ message: 'write release notes' });
      const bearer = { authorization: 'Bearer not-a-token' };
      const given = {
        get: [
          await get('q='),
          await get('q=release+notes', bearer),
          await get('q=release+notes'),
          ...[1, 2].map(() => limited.app.inject({ url: '/v1/suggest?q=release+notes' })),
        ],
        post: [
          await post('{}', json),
          await post(message, json, bearer),
          await post(JSON.stringify({ message: 'x'.repeat(1_100_000) }), json),
          await post('message', 'text/plain'),
          await post(message, json),
          ...[1, 2].map(() =>
            limited.app.inject({
              method: 'POST',
              url: '/v1/suggest',
              payload: message,
              headers: { 'content-type': json },
            }),
          ),
        ],
      };
      const doc = (await hub.app.inject({ url: '/openapi.json' })).json();
      for (const method of ['get', 'post'] as const) {
        const statuses = new Set<number>();
        for (const res of await Promise.all(given[method]))
          if (res.statusCode >= 400) statuses.add(res.statusCode);
        const declared = Object.keys(doc.paths['/v1/suggest'][method].responses)
          .map(Number)
          .filter((s) => s >= 400);
        expect([...statuses].sort(), method).toEqual(declared.sort());
      }
    } finally {
      unavailable.mockRestore();
      await limited.close();
    }
  });
});
