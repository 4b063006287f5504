import type { SuggestResult } from '@atskills/protocol';
import { describe, expect, it } from 'vitest';
import { suggestedSkill } from '../../../../packages/protocol/src/http.test-support.js';
import { suggestionLines } from './suggest.js';

function result(name: string, score: number): SuggestResult {
  return suggestedSkill(name, score, { description: `Does ${name}\nwell.` });
}

describe('atskills suggest output', () => {
  it('lists suggestions scored under 0.1 after the others, under a line that says they rarely help', () => {
    const lines = suggestionLines([
      result('a', 0.62),
      result('b', 0.1),
      result('c', 0.04),
      result('d', 0.01),
    ]);
    expect(lines).toEqual([
      '@skills:hub:acme/tools/a  (score 0.62, for "fix it")\n    a: Does a well.',
      '@skills:hub:acme/tools/b  (score 0.10, for "fix it")\n    b: Does b well.',
      'Less likely to help (scored under 0.10; such suggestions rarely help):',
      '@skills:hub:acme/tools/c  (score 0.04, for "fix it")\n    c: Does c well.',
      '@skills:hub:acme/tools/d  (score 0.01, for "fix it")\n    d: Does d well.',
    ]);
  });

  it('says so when no suggestion is likely to help, and adds no line when all are', () => {
    expect(suggestionLines([result('c', 0.09)])[0]).toBe(
      'None is likely to help (every score is under 0.10; such suggestions rarely help):',
    );
    expect(suggestionLines([result('a', 0.5), result('b', 0.3)])).toHaveLength(2);
  });
});
