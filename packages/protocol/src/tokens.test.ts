import { describe, expect, it } from 'vitest';
import { countTokens, MAX_COUNTED_RUN } from './tokens.js';

describe('countTokens', () => {
  it('counts o200k_base tokens and treats special-token text as plain text', () => {
    expect(countTokens('')).toBe(0);
    expect(countTokens('hello world')).toBe(2);
    expect(countTokens('<|endoftext|>')).toBeGreaterThan(1);
  });
});

describe('countTokens on long runs', () => {
  it('counts a run longer than MAX_COUNTED_RUN a chunk at a time, close to the exact count', async () => {
    const { countTokens: exact } = await import('gpt-tokenizer/encoding/o200k_base');
    const plain = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };
    // Words and a URL under the bound: exactly the library's count.
    const prose = 'Read https://example.com/docs/getting-started and write release notes for the team.';
    expect(countTokens(prose)).toBe(exact(prose, plain));
    // A long random-looking run: within a token a chunk of the exact count.
    let run = '';
    for (let i = 0; i < 4_096; i++) run += 'aZ09xQ7mK'[(i * 7919) % 9];
    const text = `before ${run} after`;
    const chunks = Math.ceil(run.length / MAX_COUNTED_RUN);
    expect(Math.abs(countTokens(text) - exact(text, plain))).toBeLessThanOrEqual(chunks + 2);
  });

  it('counts one word of repeated letters a chunk at a time', () => {
    // Counted whole, 262,144 `a`s took 52 s (BPE merges a repeating piece in quadratic time); a chunk at a
    // time, milliseconds (npm run bench -- hostile-input).
    const chunk = countTokens('a'.repeat(MAX_COUNTED_RUN));
    expect(countTokens('a'.repeat(262_144))).toBe(chunk * (262_144 / MAX_COUNTED_RUN));
  });
});
