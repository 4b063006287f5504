import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { SuggestResult } from '@atskills/protocol';
import { countTokens } from '@atskills/protocol/tokens';
import { describe, expect, it } from 'vitest';
import { suggestedSkill } from '../../../packages/protocol/src/http.test-support.js';
import {
  HOOK_SCORE_FLOOR,
  type KnownSkills,
  knownSkills,
  renderSuggestions,
  SUGGESTIONS_CAP,
} from './hook-suggest.js';
import { readSuggestions } from './suggest-client.js';

function result(name: string, description: string, flags: string[] = [], score = 0.9): SuggestResult {
  return suggestedSkill(name, score, {
    description,
    flags: flags.map((code) => ({ code, severity: 'warning', message: code })),
  });
}

const none: KnownSkills = { identities: new Set(), referenced: [], folders: [], excluded: new Set() };

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
    const known = { ...none, identities: new Set(['hub:acme/tools/a']), folders: ['hub:acme/tools/sub'] };
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

/** The `@skills:` rows of a hook's suggestions ([] when there are none). */
function rowsOf(text: string | undefined): string[] {
  return (text ?? '').split('\n').filter((l) => l.startsWith('@skills:'));
}

describe('renderSuggestions on what the hub may send', () => {
  it('keeps within ~300 tokens in any script: the cap counts UTF-8 bytes', () => {
    const japanese =
      'デプロイが失敗したときに、直前のリリースへ安全にロールバックし、原因を調べて報告します。'.repeat(4);
    const text = renderSuggestions(
      ['a', 'b', 'c'].map((name) => result(name, japanese)),
      none,
      3,
    ) as string;
    // Each description is cut to a line of about 66 characters (200 bytes), so all three still fit.
    expect(rowsOf(text)).toHaveLength(3);
    expect(Buffer.byteLength(text, 'utf8')).toBeLessThanOrEqual(SUGGESTIONS_CAP);
    expect(countTokens(text)).toBeLessThanOrEqual(350);
  });

  it('names each skill by its canonical identity, once, and drops what is no cloud identity', () => {
    const rows = rowsOf(
      renderSuggestions(
        [
          result('a', 'A.', [], 0.9),
          { ...result('x', 'Upper case.'), identity: 'HUB:Demo/DevOps/Rollback' },
          { ...result('y', 'Again.'), identity: 'hub:demo/devops/rollback' },
          { ...result('z', 'From a URL.'), identity: 'https://github.com/o/r/tree/main/skills/lint' },
          { ...result('bad', 'Dots.'), identity: 'gh:o/r/../escape' },
          { ...result('bad2', 'No prefix.'), identity: 'deploy/runbook' },
          { ...result('bad3', 'Encoding.'), identity: 'hub:t/c/100%' },
        ],
        none,
        10,
      ),
    );
    expect(rows).toEqual([
      '@skills:hub:acme/tools/a (a): A.',
      '@skills:hub:demo/devops/rollback (x): Upper case.',
      '@skills:gh:o/r/skills/lint (z): From a URL.',
    ]);
  });

  it('takes control characters (C0, C1, bidi) out of names, descriptions and flag codes', () => {
    const hostile = result('n', 'Rolls\u0085back \u202edeploys\u202c\u2066 now\u2069\u009b.', [
      'shell\u0000-exec\u001b',
    ]);
    const text = renderSuggestions(
      [{ ...hostile, name: 'n\u001b[2J\u001b]0;pwned\u0007' }],
      none,
      3,
    ) as string;
    expect(rowsOf(text)).toEqual([
      '@skills:hub:acme/tools/n (n[2J]0;pwned): Rolls back deploys now. [flagged: shell-exec]',
    ]);
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
  });
});

describe('knownSkills', () => {
  const rollback = suggestedSkill('rollback', 0.9, { identity: 'hub:demo/devops/rollback' });
  const deploy = suggestedSkill('deploy', 0.9, { identity: 'hub:demo/devops/deploy' });

  async function project(autotrigger?: string): Promise<string> {
    const dir = await mkdtemp(path.join(tmpdir(), 'atskills-known-'));
    await mkdir(path.join(dir, '.atskills'));
    if (autotrigger !== undefined) await writeFile(path.join(dir, '.atskills', '.autotrigger'), autotrigger);
    return dir;
  }

  it('counts a folder the message references as holding its skills: none of them is suggested again', async () => {
    const message = 'See @skills:hub:demo/devops for our playbooks. The deploy failed: roll back';
    const known = await knownSkills(message, await project());
    expect(renderSuggestions([rollback, deploy], known, 3)).toBeUndefined();
    const other = suggestedSkill('x', 0.9, { identity: 'hub:demo/devops-extra/x' });
    expect(rowsOf(renderSuggestions([other], known, 3))).toHaveLength(1);
  });

  it("suggests a skill a `!` line excludes from an installed folder, and not the folder's others", async () => {
    const dir = await project('@hub:demo/devops/\n!@hub:demo/devops/rollback\n');
    const known = await knownSkills('The deploy failed: roll back', dir);
    expect(rowsOf(renderSuggestions([rollback, deploy], known, 3))).toEqual([
      '@skills:hub:demo/devops/rollback (rollback): Does rollback.',
    ]);
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
