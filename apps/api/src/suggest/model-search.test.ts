import { describe, expect, it } from 'vitest';
import { type ModelDocument, type QueryTerm, SemanticModel } from './model.js';

/** A deterministic generator (the same cases every run). */
function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'ta', 'vo', 'zi', 'pe', 'su', 'do', 'gra'];

/**
 * A vocabulary of made-up words drawn with Zipf-like frequencies, as skill text is: a few words in most
 * skills (long lists that bound little), most words in a few (short lists that decide the answer).
 */
function corpus(random: () => number, words: number) {
  const vocabulary = Array.from({ length: words }, (_, i) => {
    let w = '';
    for (let n = i + 1; n > 0; n = Math.floor(n / SYLLABLES.length)) w += SYLLABLES[n % SYLLABLES.length];
    return `${w}x`;
  });
  const zipf = () => vocabulary[Math.min(words - 1, Math.floor(words ** random()) - 1)]!;
  const text = (count: number) => Array.from({ length: count }, zipf).join(' ');
  const doc = (): ModelDocument => ({
    name: text(1 + Math.floor(random() * 3)),
    folder: '',
    description: text(5 + Math.floor(random() * 20)),
    headings: text(Math.floor(random() * 8)),
    body: text(Math.floor(random() * 300)),
  });
  return { vocabulary, zipf, doc };
}

describe('SemanticModel.search (max-score early stop)', () => {
  it('answers exactly as reading every posting: the same skills, order and scores', () => {
    const random = generator(25);
    const { zipf, doc } = corpus(random, 600);
    const model = new SemanticModel();
    let slot = 0;
    const docs: ModelDocument[] = [];
    for (let i = 0; i < 1_500; i++) {
      const d = random() < 0.1 && docs.length > 0 ? docs[Math.floor(random() * docs.length)]! : doc();
      // Copies of one skill (published in several repositories) score the same: ties broken by slot.
      docs.push(d);
      model.set(slot++, d);
    }
    // Removed skills leave dead postings behind until a compaction; replaced ones take a new slot.
    for (let i = 0; i < 200; i++) model.delete(Math.floor(random() * slot));
    for (let i = 0; i < 100; i++) model.set(slot++, doc());
    model.mineRelated();
    let compared = 0;
    const before = model.postingsRead;
    /** Postings of live skills in the lists of every query: what reading every list reads, at least. */
    let live = 0;
    for (let round = 0; round < 300; round++) {
      // A need's words, synonyms and related terms, as the engine weighs them (see its queryTerms).
      const query: QueryTerm[] = [];
      const seen = new Set<string>();
      const put = (term: string, weight: number, of: string) => {
        if (seen.has(term)) return;
        seen.add(term);
        query.push({ term, weight, of });
      };
      for (let i = 1 + Math.floor(random() * 25); i > 0; i--) {
        const term = zipf();
        put(term, 1, term);
        if (random() < 0.3) put(zipf(), 0.8, term);
        for (const r of model.relatedTerms(term).slice(0, 3)) put(r.term, 0.5 * r.npmi, term);
      }
      if (random() < 0.1) put('neverseenxword', 1, 'neverseenxword');
      const depth = [1, 10, 30, 50, 200][round % 5]!;
      const hidden = Math.floor(random() * 4);
      const admit = hidden === 0 ? () => true : (s: number) => s % (hidden + 2) !== 0;
      const expected = model.searchEveryPosting(query, depth, admit);
      const got = model.search(query, depth, admit);
      expect(got, `round ${round}`).toEqual(expected);
      compared += expected.length;
      for (const q of query) live += model.dfOf(model.termIdOf(q.term) ?? -1);
    }
    expect(compared).toBeGreaterThan(10_000);
    // The early stop was taken, not just never wrong: far fewer postings read than the lists hold.
    const read = model.postingsRead - before;
    expect(read).toBeGreaterThan(0);
    expect(read).toBeLessThan(0.8 * live);
  });
});
