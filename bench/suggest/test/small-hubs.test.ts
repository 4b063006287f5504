/** How the small-hub benchmark picks a hub's skills. */
import { describe, expect, it } from 'vitest';
import { Rng } from '../../lib/rng.js';
import type { MessageJudgement } from '../messages.js';
import { keptSkills } from '../small-hubs.js';

const judged = (id: string, kind: MessageJudgement['kind'], relevant: string[]): MessageJudgement => ({
  id,
  kind,
  message: id,
  relevant,
});

const live = Array.from({ length: 200 }, (_, i) => `gh:o/r/s${i}`);
const judgements = [
  judged('d1', 'direct', ['gh:o/r/s0', 'gh:o/r/s1']),
  judged('d2', 'direct', ['gh:o/r/s2']),
  judged('i1', 'indirect', ['gh:o/r/s3', 'gh:o/r/s4', 'gh:o/r/s5']),
  // A skill the corpus withholds: never kept, and the message's other skill still counts.
  judged('i2', 'indirect', ['gh:o/r/s6', 'gh:gone/r/x']),
  judged('m1', 'multi', ['gh:o/r/s7', 'gh:o/r/s8']),
  judged('n1', 'none', []),
];
/** The messages whose every live skill the hub kept (what the benchmark can judge in it). */
const wholeIn = (kept: Set<string>) =>
  judgements.filter(
    (j) => j.kind !== 'none' && j.relevant.filter((id) => live.includes(id)).every((id) => kept.has(id)),
  );

describe('keptSkills', () => {
  it('fills a hub to its size with skills the corpus holds', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const kept = keptSkills(judgements, live, 10, new Rng(seed));
      expect(kept.size).toBe(10);
      expect([...kept].every((id) => live.includes(id))).toBe(true);
    }
  });

  it('builds every hub around whole messages: some message can always be judged in it', () => {
    for (let seed = 1; seed <= 20; seed++) {
      // Ten skills: messages whole up to five judged skills, then five at random among 200.
      expect(wholeIn(keptSkills(judgements, live, 10, new Rng(seed))).length).toBeGreaterThan(0);
      // Two skills: only a message of one live skill fits in half of it.
      const tiny = keptSkills(judgements, live, 2, new Rng(seed));
      expect(tiny.has('gh:o/r/s2') || tiny.has('gh:o/r/s6')).toBe(true);
    }
  });

  it('picks the same hub for the same seed and other hubs for other seeds', () => {
    const hub = (seed: number) => [...keptSkills(judgements, live, 10, new Rng(seed))].sort().join(' ');
    expect(hub(3)).toBe(hub(3));
    expect(new Set([1, 2, 3, 4, 5, 6].map(hub)).size).toBeGreaterThan(1);
  });
});
