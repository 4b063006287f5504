import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SUGGEST_MAX_MESSAGE, SUGGEST_TIMEOUT_HEADER, SuggestBody } from '@atskills/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { codePointCount, fetchSuggestions, fitSuggestMessage } from './suggest-client.js';

/** A hub stand-in answering every request with `status` and `body`, recording the request headers and bodies. */
async function hubAnswering(
  status: number,
  body: unknown,
): Promise<{ url: string; seen: IncomingHttpHeaders[]; bodies: string[] }> {
  const seen: IncomingHttpHeaders[] = [];
  const bodies: string[] = [];
  server = createServer((req, res) => {
    seen.push(req.headers);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      bodies.push(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(status, { 'content-type': 'application/json', 'retry-after': '1' });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, bodies };
}

let server: Server | undefined;
afterEach(async () => {
  const open = server;
  server = undefined;
  if (open) await new Promise((resolve) => open.close(resolve));
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

  it('sends a long message as its head and its tail, within what the hub accepts, never splitting a character', async () => {
    const hub = await hubAnswering(200, { results: [], abstained: true });
    const ask = 'The deploy failed: roll back to the previous release.';
    // Pasted logs of emoji: 2 UTF-16 units each, 1 code point; the ask comes last, as it usually does.
    const message = `Here are the logs:\n${'😀 '.repeat(6_000)}\n${ask}`;
    await fetchSuggestions({ hubUrl: hub.url }, message);
    const sent = SuggestBody.parse(JSON.parse(hub.bodies[0] as string));
    expect(sent.message.startsWith('Here are the logs:\n😀 😀')).toBe(true);
    expect(sent.message.endsWith(ask)).toBe(true);
    expect(sent.message).toContain('\n…\n');
    expect([...sent.message]).toHaveLength(SUGGEST_MAX_MESSAGE);
    // A lone surrogate cannot be URI-encoded: the message is well formed.
    expect(() => encodeURIComponent(sent.message)).not.toThrow();
  });

  it('sends a message the hub reads whole as it is, counted in code points as the hub counts', async () => {
    const hub = await hubAnswering(200, { results: [], abstained: true });
    const emoji = '😀'.repeat(SUGGEST_MAX_MESSAGE);
    await fetchSuggestions({ hubUrl: hub.url }, `  ${emoji}\n`);
    expect(JSON.parse(hub.bodies[0] as string).message).toBe(emoji);
  });
});

describe('fitSuggestMessage', () => {
  it('cuts between characters wherever the head and the tail end', () => {
    for (const filler of ['a', '😀', 'a😀', '\ud800']) {
      const text = fitSuggestMessage(`x${filler.repeat(9_000)}y`);
      expect(SuggestBody.safeParse({ message: text }).success).toBe(true);
      expect([...text]).toHaveLength(SUGGEST_MAX_MESSAGE);
      expect(text.startsWith('x')).toBe(true);
      expect(text.endsWith('y')).toBe(true);
      if (filler !== '\ud800') expect(() => encodeURIComponent(text)).not.toThrow();
    }
  });

  it('keeps the head and tail of a message of many megabytes without copying it into code points', () => {
    const ask = 'Why does the build fail?';
    const message = `Logs:\n${'😀 build step ok\n'.repeat(1_500_000)}${ask}`; // 27 MB of UTF-16
    const started = performance.now();
    const text = fitSuggestMessage(message);
    // Spreading it into an array of code points took seconds (and gigabytes for 50 MB).
    expect(performance.now() - started).toBeLessThan(300);
    expect(codePointCount(text)).toBe(SUGGEST_MAX_MESSAGE);
    expect(text.startsWith('Logs:\n😀 build')).toBe(true);
    expect(text.endsWith(`ok\n${ask}`)).toBe(true);
  });

  it('counts code points as zod does, a lone surrogate as one', () => {
    expect(codePointCount('a😀\ud800b\udc00')).toBe(5);
    expect(codePointCount('')).toBe(0);
    for (const text of ['\ud800', '\udc00\ud800', '😀😀', 'a\ud83d', '\ude00a'])
      expect(codePointCount(text)).toBe([...text].length);
  });
});
