/** What the suggestion benchmark reports about scores: per band, and what the hook appends at a floor. */
import { describe, expect, it } from 'vitest';
import { hookViews, scoreBands } from '../judgements.js';
import type { MessageJudgement } from '../messages.js';

const judged = (id: string, kind: MessageJudgement['kind'], relevant: string[]): MessageJudgement => ({
  id,
  kind,
  message: id,
  relevant,
});

// Two copies of one skill share a copy key: showing either counts as showing it.
const copyOf = new Map([
  ['gh:a/r/s1', 'one'],
  ['gh:b/r/s1', 'one'],
]);

const results = [
  {
    judgement: judged('d1', 'direct', ['gh:a/r/s1']),
    answer: { ranking: ['gh:b/r/s1', 'gh:a/r/x', 'gh:a/r/y'], abstained: false },
    scores: [0.9, 0.3, 0.04],
  },
  {
    judgement: judged('i1', 'indirect', ['gh:a/r/z']),
    answer: { ranking: ['gh:a/r/w', 'gh:a/r/z'], abstained: false },
    scores: [0.15, 0.06],
  },
  {
    judgement: judged('n1', 'none', []),
    answer: { ranking: ['gh:a/r/q'], abstained: false },
    scores: [0.12],
  },
  { judgement: judged('n2', 'none', []), answer: { ranking: [], abstained: true }, scores: [] },
];

describe('scoreBands', () => {
  it('counts each shown result in its band, first results apart, copies of a judged skill as judged', () => {
    const bands = scoreBands(results, copyOf);
    const at = (score: number) => bands.find((b) => score >= b.from && score < b.to)!;
    expect(at(0.9).first).toEqual({ shown: 1, relevant: 1 });
    expect(at(0.15).first).toEqual({ shown: 2, relevant: 0 });
    expect(at(0.3).later).toEqual({ shown: 1, relevant: 0 });
    expect(at(0.06).later).toEqual({ shown: 1, relevant: 1 });
    expect(at(0.04).later).toEqual({ shown: 1, relevant: 0 });
    const shown = bands.reduce((n, b) => n + b.first.shown + b.later.shown, 0);
    expect(shown).toBe(6); // the abstained answer shows nothing
  });
});

describe('hookViews', () => {
  it('keeps the first three results at or over each floor: lines a message, judged share, answerable hits', () => {
    const [none, floor] = hookViews(results, copyOf, [0, 0.1]);
    expect(none).toEqual({ floor: 0, linesPerMessage: 1.5, precision: round(2 / 6), hitRate: 1 });
    // At 0.1: d1 keeps 2 (its judged copy first), i1 loses the judged 0.06, n1 keeps its 0.12.
    expect(floor).toEqual({ floor: 0.1, linesPerMessage: 1, precision: 0.25, hitRate: 0.5 });
  });
});

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
