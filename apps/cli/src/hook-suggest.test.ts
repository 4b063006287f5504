import type { SuggestResult } from '@atskills/protocol';
import { describe, expect, it } from 'vitest';
import { suggestedSkill } from '../../../packages/protocol/src/http.test-support.js';
import { HOOK_SCORE_FLOOR, renderSuggestions, SUGGESTIONS_CAP } from './hook-suggest.js';
import { readSuggestions } from './suggest-client.js';

function result(name: string, description: string, flags: string[] = [], score = 0.9): SuggestResult {
  return suggestedSkill(name, score, {
    description,
    flags: flags.map((code) => ({ code, severity: 'warning', message: code })),
  });
}

const none = { identities: new Set<string>(), folders: [] };

describe('renderSuggestions', () => {
  it('frames identity and one-line description rows, at most `limit`, flags named', () => {
    const text = renderSuggestions(
      [result('a', 'Does\nA.'), result('b', 'Does B.', ['shell-exec']), result('c', 'Does C.')],
      none,
      2,
    ) as string;
    const frame =
      /<(skill-text-[0-9a-f]{16}) kind="suggestions" source="hub" count="2">\n([\s\S]*)\n<\/\1>$/.exec(text);
    expect(frame?.[2]).toBe(
      '@skills:hub:acme/tools/a (a): Does A.\n@skills:hub:acme/tools/b (b): Does B. [flagged: shell-exec]',
    );
  });

  it('leaves out known skills (exact or under an installed folder) and skills judged malicious', () => {
    const known = { identities: new Set(['hub:acme/tools/a']), folders: ['hub:acme/tools/sub'] };
    const results = [result('a', 'A.'), result('sub/x', 'X.'), result('bad', 'Bad.', ['reported-malicious'])];
    expect(renderSuggestions(results, known, 3)).toBeUndefined();
  });

  it('leaves out suggestions scored under the floor, whatever their place, and keeps one at it', () => {
    const results = [
      result('a', 'A.', [], 0.62),
      result('b', 'B.', [], HOOK_SCORE_FLOOR - 0.001),
      result('c', 'C.', [], HOOK_SCORE_FLOOR),
    ];
    const rows = (renderSuggestions(results, none, 2) as string)
      .split('\n')
      .filter((l) => l.startsWith('@skills:'));
    expect(rows).toEqual(['@skills:hub:acme/tools/a (a): A.', '@skills:hub:acme/tools/c (c): C.']);
    expect(renderSuggestions([result('low', 'Low.', [], 0.04)], none, 3)).toBeUndefined();
  });

  it('stays within the cap whatever the descriptions, cutting each to one short line', () => {
    const long = Array.from({ length: 10 }, (_, i) => result(`s${i}`, 'word '.repeat(500)));
    const text = renderSuggestions(long, none, 10) as string;
    expect(text.length).toBeLessThanOrEqual(SUGGESTIONS_CAP);
    expect(text.split('\n').filter((l) => l.startsWith('@skills:')).length).toBeGreaterThan(2);
    for (const row of text.split('\n').filter((l) => l.startsWith('@skills:')))
      expect(row.length).toBeLessThan(260);
  });
});

describe('readSuggestions', () => {
  it('reads results, drops what is not one, and answers [] for an abstention or anything else', () => {
    const good = result('a', 'A.');
    expect(readSuggestions({ results: [good, { identity: 1 }, null], abstained: false })).toEqual([good]);
    expect(readSuggestions({ results: [good], abstained: true })).toEqual([]);
    expect(readSuggestions({ results: 'x', abstained: false })).toEqual([]);
    expect(readSuggestions(null)).toEqual([]);
    const noFlags = readSuggestions({
      results: [{ ...good, flags: [{ code: 3 }, { code: 'x' }] }],
      abstained: false,
    });
    expect(noFlags[0]?.flags.map((f) => f.code)).toEqual(['x']);
    // The hook weighs each suggestion by its score: one without a readable score is not one.
    const scores = [undefined, '0.5', Number.NaN, -0.1, 1.5].map((score) => ({ ...good, score }));
    expect(readSuggestions({ results: [...scores, good], abstained: false })).toEqual([good]);
  });
});
