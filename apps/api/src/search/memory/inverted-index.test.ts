// The rank directories of long posting lists find the same postings as the galloping search and the
// scan they replace: after the build, for documents added after a directory was built (its tail), and
// after removals and compaction.
import { describe, expect, it } from 'vitest';
import { termOf } from '../relevance/analyze.js';
import { type CandidateSet, InvertedIndex, type ScoringSlot } from './inverted-index.js';

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
