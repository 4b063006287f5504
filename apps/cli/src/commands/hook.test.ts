import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { suggestedSkill } from '../../../../packages/protocol/src/http.test-support.js';
import { runCaptured } from '../cli.test-support.js';

describe('atskills hook user-prompt on what stdin holds', () => {
  it.each(['null', '5', 'true', '"fix it"', '[{"prompt":"x"}]'])(
    'answers %s (JSON but no event) as no event, from the working folder, without a failure note',
    async (stdin) => {
      const result = await runCaptured(['hook', 'user-prompt', '--host', 'claude-code'], { stdin });
      expect(result.code).toBe(0);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(
        'atskills hook: stdin is not a JSON object; answered from the working folder\n',
      );
    },
  );

  describe('with suggestions on', () => {
    let hub: Server;
    let hubUrl: string;
    beforeAll(async () => {
      hub = createServer((req, res) => {
        req.resume();
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ results: [suggestedSkill('rollback', 0.8)], abstained: false }));
        });
      });
      await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve));
      hubUrl = `http://127.0.0.1:${(hub.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => hub.close(() => resolve())));

    it.each([
      ['a UTF-8 byte order mark', (event: string) => [Buffer.from(`\uFEFF${event}`)]],
      // A host writing the mark as its own chunk: the decoder sees it alone.
      [
        'a byte order mark in a chunk of its own',
        (event: string) => [Buffer.from('\uFEFF'), Buffer.from(event)],
      ],
      ['a byte order mark in a text chunk', (event: string) => [`\uFEFF${event}`]],
    ])('reads the event after %s', async (_what, chunks) => {
      const event = JSON.stringify({ prompt: 'The deploy failed, roll it back' });
      const result = await runCaptured(['hook', 'user-prompt', '--host', 'claude-code'], {
        stdin: chunks(event),
        env: {
          ATSKILLS_HUB: hubUrl,
          ATSKILLS_SUGGEST: '1',
          // Generous for a loaded machine: the stand-in answers at once.
          ATSKILLS_SUGGEST_TIMEOUT_MS: '5000',
          ATSKILLS_HOOK_BUDGET_MS: '10000',
        },
      });
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      const answer = JSON.parse(result.stdout) as { hookSpecificOutput: { additionalContext: string } };
      expect(answer.hookSpecificOutput.additionalContext).toContain(
        '@skills:hub:acme/tools/rollback (rollback): Does rollback.',
      );
    });
  });
});

describe('atskills hook user-prompt on a message with thousands of references', () => {
  let hub: Server;
  let hubUrl: string;
  const asked = new Set<string>();
  beforeAll(async () => {
    hub = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        if (req.method === 'POST' && req.url === '/v1/resolve') {
          const { items } = JSON.parse(body) as { items: { identity: string }[] };
          for (const item of items) asked.add(item.identity);
        } else if (req.url?.startsWith('/v1/skills/')) {
          asked.add(decodeURIComponent(req.url.slice('/v1/skills/'.length).split('?')[0] ?? ''));
        }
        res.writeHead(404, { 'content-type': 'application/problem+json' });
        res.end(JSON.stringify({ type: 'about:blank', title: 'Not Found', status: 404, code: 'not-found' }));
      });
    });
    await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve));
    hubUrl = `http://127.0.0.1:${(hub.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => hub.close(() => resolve())));

  it('resolves the first 128 distinct ones, asks the hub for no other, and says how many were left out', async () => {
    const prompt = Array.from({ length: 3_000 }, (_, i) => `@skills:hub:acme/kit/s${i}`).join(' ');
    const started = performance.now();
    const result = await runCaptured(['hook', 'user-prompt', '--host', 'claude-code'], {
      stdin: JSON.stringify({ prompt }),
      env: { ATSKILLS_HUB: hubUrl },
    });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(result.code).toBe(0);
    const context = (JSON.parse(result.stdout) as { hookSpecificOutput: { additionalContext: string } })
      .hookSpecificOutput.additionalContext;
    expect(context.length).toBeLessThanOrEqual(10_000);
    expect(context).toContain(
      '(atskills note: 2872 more references left out: one message resolves at most its first 128 distinct references;',
    );
    // The hub's batch limit, and what is charged against the caller's rate limit: 128 items, not 3,000.
    expect(asked.size).toBeGreaterThan(0);
    expect([...asked].every((id) => Number(/s(\d+)$/.exec(id)?.[1]) < 128)).toBe(true);
  });
});
