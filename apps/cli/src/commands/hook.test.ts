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
