import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SUGGEST_TIMEOUT_HEADER } from '@atskills/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { fetchSuggestions } from './suggest-client.js';

/** A hub stand-in answering every request with `status` and `body`, recording the request headers. */
async function hubAnswering(
  status: number,
  body: unknown,
): Promise<{ url: string; seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = [];
  server = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    req.on('end', () => {
      res.writeHead(status, { 'content-type': 'application/json', 'retry-after': '1' });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

describe('fetchSuggestions', () => {
  it('tells the hub how long it waits, in atskills-timeout-ms', async () => {
    const hub = await hubAnswering(200, { results: [], abstained: true });
    await fetchSuggestions({ hubUrl: hub.url }, 'write release notes', { deadlineMs: 640.7 });
    await fetchSuggestions({ hubUrl: hub.url }, 'write release notes');
    expect(hub.seen.map((h) => h[SUGGEST_TIMEOUT_HEADER])).toEqual(['640', '800']);
  });

  it('answers nothing, without waiting out its deadline, when the hub says it is too busy', async () => {
    const hub = await hubAnswering(503, { code: 'unavailable', retryAfterSeconds: 1 });
    const started = performance.now();
    expect(await fetchSuggestions({ hubUrl: hub.url }, 'write release notes', { deadlineMs: 5_000 })).toEqual(
      [],
    );
    expect(performance.now() - started).toBeLessThan(4_000);
  });
});
