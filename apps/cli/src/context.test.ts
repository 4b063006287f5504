import { describe, expect, it } from 'vitest';
import { pipedStdin } from './cli.test-support.js';
import { CliContext } from './context.js';

function contextReading(...chunks: Buffer[]): CliContext {
  const sink = { write: () => true };
  return new CliContext({ cwd: '/', env: {}, stdout: sink, stderr: sink, stdin: pipedStdin(...chunks) });
}

describe('CliContext.readStdin', () => {
  it('decodes a character split between two chunks whole', async () => {
    const bytes = Buffer.from('ロールバック 😀', 'utf8');
    // Cut inside the first character (3 bytes) and inside the emoji (4 bytes).
    const chunks = [
      bytes.subarray(0, 1),
      bytes.subarray(1, bytes.length - 2),
      bytes.subarray(bytes.length - 2),
    ];
    expect(await contextReading(...chunks).readStdin()).toBe('ロールバック 😀');
  });
});

describe('CliContext.settings', () => {
  it('says once on stderr which variables it could not read', async () => {
    const errors: string[] = [];
    const sink = { write: () => true };
    const ctx = new CliContext({
      cwd: '/',
      env: { ATSKILLS_SUGGEST: 'yes please', XDG_CONFIG_HOME: '/nonexistent' },
      stdout: sink,
      stderr: { write: (text: string) => errors.push(text) },
    });
    await ctx.settings();
    await ctx.settings();
    expect(errors).toEqual([
      'atskills: ignored ATSKILLS_SUGGEST="yes please" (on, off or a number from 0 to 10); its default applies\n',
    ]);
  });
});
