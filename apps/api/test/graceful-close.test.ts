/**
 * Closing the hub answers the requests in flight and then finishes, also on keep-alive connections (a
 * load balancer's): before plugins/graceful-close.ts, such a connection stayed open for keepAliveTimeout
 * (72 s) after its answer and `app.close()` waited for it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';

let database: TestDatabase;
let app: FastifyInstance;

beforeAll(async () => {
  database = await createTestDatabase('graceful_close');
  app = await buildApp(
    loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: database.url, SEARCH_ENGINE: 'postgres' }),
  );
  await app.listen({ host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('closing the hub', () => {
  it('answers a request in flight on a keep-alive connection, then finishes at once', async () => {
    const { port } = app.server.address() as AddressInfo;
    const agent = new http.Agent({ keepAlive: true });
    // A batch resolution whose body is still arriving when closing begins: the request is in flight.
    const body = JSON.stringify({ items: [{ identity: 'gh:nobody/nothing/skills/none' }] });
    const answered = new Promise<{ status: number; connection: string | undefined; body: string }>(
      (resolve, reject) => {
        const request = http.request(
          {
            host: '127.0.0.1',
            port,
            method: 'POST',
            path: '/v1/resolve',
            agent,
            headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
          },
          (response) => {
            let text = '';
            response.on('data', (chunk) => {
              text += chunk;
            });
            response.on('end', () =>
              resolve({
                status: response.statusCode ?? 0,
                connection: response.headers.connection,
                body: text,
              }),
            );
          },
        );
        request.on('error', reject);
        request.write(body.slice(0, 10));
        void sleep(400).then(() => request.end(body.slice(10)));
      },
    );
    await sleep(100);
    const started = performance.now();
    const closed = app.close().then(() => performance.now() - started);
    const answer = await answered;
    expect(answer.status, answer.body).toBe(200);
    expect(answer.connection).toBe('close');
    const tookMs = await Promise.race([closed, sleep(10_000).then(() => Number.POSITIVE_INFINITY)]);
    // The answer came about 300 ms after closing began; closing then ends within a sweep, not 72 s later.
    expect(tookMs).toBeLessThan(2_000);
    agent.destroy();
  });
});
