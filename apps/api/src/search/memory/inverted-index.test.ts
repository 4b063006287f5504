// The rank directories of long posting lists find the same postings as the galloping search and the
// scan they replace: after the build, for documents added after a directory was built (its tail), and
// after removals and compaction.
import { describe, expect, it } from 'vitest';
import { TimeSlicer } from '../../runtime/time-slice.js';
import { termOf } from '../relevance/analyze.js';
import { K1 } from '../tuning.js';
import { PUBLIC_GROUP, PUBLIC_VIEW, type StatisticsView } from './group-statistics.js';
import {
  type CandidateSet,
  InvertedIndex,
  LEVELS_PER_UNIT,
  type ScoringSlot,
  saturationLevel,
} from './inverted-index.js';

/** A deterministic document: every word of a small vocabulary with a frequency of its own. */
function documentText(i: number) {
  const words = ['deploy', 'kubernetes', 'review', 'release', 'notes', 'testing', 'pdf', 'changelog'];
  const held = words.filter((_, w) => (i * (w + 3)) % (w + 2) !== 0);
  return {
    name: i % 97 === 0 ? `deploy-${i}` : `tool-${i}`,
    description: held.slice(0, 3).join(' '),
    headings: i % 5 === 0 ? 'Release notes' : '',
    body: held.map((w, k) => `${w} `.repeat(1 + ((i + k) % 4))).join(' '),
  };
}

function snapshot(set: CandidateSet) {
  return Array.from({ length: set.count }, (_, i) => [
    set.slots[i],
    set.text[i],
    set.matched[i],
    set.headMatched[i],
    set.covered[i],
  ]);
}

const slots: ScoringSlot[] = [
  { expansions: [{ terms: [termOf('deploy')], weight: 1 }] },
  {
    expansions: [
      { terms: [termOf('release')], weight: 1 },
      { terms: [termOf('changelog')], weight: 0.8 },
      { terms: [termOf('release'), termOf('notes')], weight: 0.8 },
    ],
  },
  { expansions: [{ terms: [termOf('pdf')], weight: 1 }] },
];

describe('InvertedIndex rank directories', () => {
  it('score the same candidates the same as the searches they replace', () => {
    const withDirectories = new InvertedIndex({ rankDirectoryMin: 1 });
    const without = new InvertedIndex({ rankDirectoryMin: Number.POSITIVE_INFINITY });
    const both = (act: (index: InvertedIndex) => void) => {
      act(withDirectories);
      act(without);
    };
    const compare = (exhaustive: boolean) => {
      const a = snapshot(withDirectories.score(slots, exhaustive, [], [1, 2, 3]));
      const b = snapshot(without.score(slots, exhaustive, [], [1, 2, 3]));
      expect(a.length).toBeGreaterThan(0);
      expect(a).toEqual(b);
    };
    for (let i = 0; i < 3000; i++) both((index) => index.add(documentText(i)));
    both((index) => index.freezeStatistics());
    compare(false);
    compare(true);
    expect(withDirectories.directoryBytes).toBeGreaterThan(0);
    expect(without.directoryBytes).toBe(0);

    // Added after the directories were built: found in the lists' tails.
    for (let i = 3000; i < 3100; i++) both((index) => index.add(documentText(i)));
    compare(false);
    compare(true);
    // Enough added that the directories are rebuilt.
    for (let i = 3100; i < 4000; i++) both((index) => index.add(documentText(i)));
    compare(true);

    // Removed documents are never candidates; compaction drops their postings and the directories.
    for (let slot = 0; slot < 4000; slot += 3) both((index) => index.remove(slot));
    compare(true);
    both((index) => index.compact());
    compare(false);
    compare(true);
  });

  it('give a document the weights it was added with, in and out of the head', () => {
    const index = new InvertedIndex({ rankDirectoryMin: 1 });
    for (let i = 0; i < 64; i++) {
      index.add({ name: `tool-${i}`, description: i === 40 ? 'deploy' : '', headings: '', body: 'deploy' });
    }
    const set = index.score([slots[0]!], true, [], [1]);
    const at = Array.from(set.slots.subarray(0, set.count)).indexOf(40);
    expect(set.count).toBe(64);
    // The description match is in the head and weighs more than a body match.
    expect(set.headMatched[at]).toBe(1);
    expect(set.headMatched[(at + 1) % set.count]).toBe(0);
    expect(set.text[at]).toBeGreaterThan(set.text[(at + 1) % set.count]!);
  });
});

describe('InvertedIndex.prepareLists', () => {
  it('builds ahead what the first searches would, and they then draw and score the same', async () => {
    const draw = { budget: 60, perSlot: 12 };
    const prepared = new InvertedIndex({ rankDirectoryMin: 256 });
    const lazy = new InvertedIndex({ rankDirectoryMin: 256 });
    for (const index of [prepared, lazy]) {
      for (let i = 0; i < 3000; i++) index.add(documentText(i));
      index.freezeStatistics();
    }
    expect(prepared.derivedBytes).toBe(0);
    await prepared.prepareLists(new TimeSlicer(0), draw);
    const built = prepared.derivedBytes;
    expect(built).toBeGreaterThan(0);

    // One slot draws the largest share (the heads prepared), three slots a prefix of it.
    for (const asked of [[slots[0]!], slots]) {
      expect(snapshot(prepared.score(asked, false, [], [1, 2, 3], draw))).toEqual(
        snapshot(lazy.score(asked, false, [], [1, 2, 3], draw)),
      );
    }
    // Nothing was built again, and the lazy index built no more than was prepared.
    expect(prepared.derivedBytes).toBe(built);
    expect(lazy.derivedBytes).toBeLessThanOrEqual(built);
  });

  it('stops once the bytes it may spend are spent', async () => {
    const index = new InvertedIndex({ rankDirectoryMin: 256 });
    for (let i = 0; i < 3000; i++) index.add(documentText(i));
    index.freezeStatistics();
    await index.prepareLists(new TimeSlicer(0), { budget: 60, perSlot: 12 }, 1);
    const first = index.derivedBytes;
    expect(first).toBeGreaterThan(0);
    await index.prepareLists(new TimeSlicer(0), { budget: 60, perSlot: 12 });
    expect(index.derivedBytes).toBeGreaterThan(first);
  });
});

describe('a snapshot of the InvertedIndex', () => {
  /** Every reader's statistics: public only, each private group's readers, both, an administrator. */
  const views: StatisticsView[] = [PUBLIC_VIEW, [1], [2], [1, 2], 'all'];
  /** Two private groups among the documents (most are public). */
  const groupOf = (i: number) => (i % 5 === 0 ? 1 : i % 7 === 0 ? 2 : PUBLIC_GROUP);
  /**
   * What searches read of an index, for every reader: candidates scored both ways, completions,
   * corrections, counts.
   */
  const answers = (index: InvertedIndex) => ({
    size: index.size,
    vocabulary: index.vocabularySize,
    postings: index.postingCount,
    drift: index.statisticsDrift,
    alive: [0, 3, 9, 3998, 4001].map((slot) => index.isAlive(slot)),
    views: views.map((view) => ({
      drawn: snapshot(index.score(slots, false, [7], [1, 2, 3], { budget: 40, perSlot: 10 }, view)),
      all: snapshot(index.score(slots, true, [], [1, 2, 3], undefined, view)),
      completions: ['de', 'rel', 'tool-1', 'x', 'zeb'].map((p) => index.completions(p, 20, view)),
      near: ['deplyo', 'relase', 'kubernets'].map((w) => index.nearWords(w, 2, 10, 0, view)),
      idf: ['deploy', 'pdf', 'notes', 'zebra'].map((w) => [
        index.termIdf(termOf(w), view),
        index.wordFrequency(w, view),
      ]),
    })),
  });

  it('restores an index that answers as the one it was taken of, and takes changes alike', async () => {
    const index = new InvertedIndex({ rankDirectoryMin: 1 });
    for (let i = 0; i < 3000; i++) index.add(documentText(i), groupOf(i));
    index.freezeStatistics();
    for (let slot = 0; slot < 3000; slot += 3) index.remove(slot);
    for (let i = 3000; i < 3200; i++) index.add(documentText(i), groupOf(i));
    // Heads and directories built before the snapshot (a restored index builds its own).
    index.score(slots, false, [], [1, 2, 3], { budget: 40, perSlot: 10 });

    const taken = await index.snapshot(new TimeSlicer(0));
    const restored = await InvertedIndex.restore(structuredClone(taken), new TimeSlicer(0), {
      rankDirectoryMin: 1,
    });
    // The live index's heads were built over fewer postings: a fresh index built from the same documents
    // draws what the restored one draws.
    const fresh = new InvertedIndex({ rankDirectoryMin: 1 });
    for (let i = 0; i < 3000; i++) fresh.add(documentText(i), groupOf(i));
    fresh.freezeStatistics();
    for (let slot = 0; slot < 3000; slot += 3) fresh.remove(slot);
    for (let i = 3000; i < 3200; i++) fresh.add(documentText(i), groupOf(i));
    expect(answers(restored)).toEqual(answers(fresh));
    const scored = (index: InvertedIndex) => answers(index).views.map((v) => v.all);
    expect(scored(restored)).toEqual(scored(index));
    expect(await restored.snapshot(new TimeSlicer())).toEqual(taken);

    for (const target of [fresh, restored]) {
      for (let i = 3200; i < 4200; i++) target.add(documentText(i), groupOf(i));
      // A word only one private group holds: no other reader's vocabulary has it.
      target.add({ name: 'zebra-tool', description: 'brand new word', headings: '', body: 'zebra' }, 2);
      for (let slot = 1; slot < 4000; slot += 7) target.remove(slot);
      target.compact();
      target.freezeStatistics();
    }
    expect(answers(restored)).toEqual(answers(fresh));
    expect(restored.completions('zeb', 5, [2])).toEqual([{ word: 'zebra', df: 1 }]);
    expect(restored.completions('zeb', 5, 'all')).toEqual([{ word: 'zebra', df: 1 }]);
    for (const outsider of [PUBLIC_VIEW, [1]]) {
      expect(restored.completions('zeb', 5, outsider)).toEqual([]);
      expect(restored.termIdf(termOf('zebra'), outsider)).toBe(0);
      expect(restored.nearWords('zebrx', 1, 5, 0, outsider)).toEqual([]);
    }
  });
});

describe('private groups in the statistics', () => {
  it('restores statistics frozen before the first private document arrived', async () => {
    const index = new InvertedIndex({ rankDirectoryMin: 1 });
    for (let i = 0; i < 300; i++) index.add(documentText(i));
    index.freezeStatistics();
    for (let i = 300; i < 400; i++) index.add(documentText(i), 1 + (i % 2));
    index.freezeGroupStatistics(1);
    const restored = await InvertedIndex.restore(
      structuredClone(await index.snapshot(new TimeSlicer(0))),
      new TimeSlicer(0),
      { rankDirectoryMin: 1 },
    );
    const outsiderIndex = new InvertedIndex({ rankDirectoryMin: 1 });
    for (let i = 0; i < 300; i++) outsiderIndex.add(documentText(i));
    outsiderIndex.freezeStatistics();
    for (const target of [index, restored]) {
      // An outsider's statistics are the public documents' frozen ones, whatever groups came since.
      expect(target.statisticsDrift).toBe(1);
      for (const w of ['deploy', 'pdf', 'notes']) {
        expect(target.termIdf(termOf(w), PUBLIC_VIEW)).toBe(outsiderIndex.termIdf(termOf(w)));
      }
      expect(
        snapshot(target.score(slots, true, [], [1, 2, 3], undefined, PUBLIC_VIEW)).filter((c) => c[0]! < 300),
      ).toEqual(snapshot(outsiderIndex.score(slots, true, [], [1, 2, 3])));
    }
    for (const view of [[1], [2], [1, 2], 'all'] as StatisticsView[]) {
      expect(restored.termIdf(termOf('deploy'), view)).toBe(index.termIdf(termOf('deploy'), view));
    }
  });
});

describe('saturationLevel', () => {
  it("stores a weight's saturation within half a level, in order, never 0 (the sign marks the head)", () => {
    let previous = 0;
    for (let weight = 0; weight <= 200; weight += 0.037) {
      const level = saturationLevel(weight);
      const saturation = (weight * (K1 + 1)) / (weight + K1);
      expect(level).toBeGreaterThanOrEqual(previous);
      expect(level).toBeGreaterThanOrEqual(1);
      expect(level).toBeLessThanOrEqual(32766);
      if (level > 1)
        expect(Math.abs(level / LEVELS_PER_UNIT - saturation)).toBeLessThanOrEqual(0.5 / LEVELS_PER_UNIT);
      previous = level;
    }
    // The largest weights still fit an Int16Array with room for the sign.
    expect(saturationLevel(1e9)).toBe(32766);
    expect(new Int16Array([-saturationLevel(1e9)])[0]).toBe(-32766);
  });
});
