import { describe, expect, it } from 'vitest';
import { TimeSlicer } from '../runtime/time-slice.js';
import { READ_CAP, SemanticModel } from './model.js';

/** A skill holding "widget" in its name (heavy) or once in its body (light). */
const skill = (i: number, named: boolean) => ({
  name: named ? `widget-${i}` : `tool-${i}`,
  folder: '',
  description: named ? 'Build widget layouts' : `Task number ${i}`,
  headings: '',
  body: named ? '' : 'Mentions a widget once.',
});

const WIDGET = [{ term: 'widget', weight: 1, of: 'widget' }];
const everyone = () => true;

/** Names of the skills a search returns, sorted (the order of equal scores follows slots). */
function found(model: SemanticModel, names: Map<number, string>, cap: number): string[] {
  return model
    .search(WIDGET, 100, everyone, cap)
    .map((h) => names.get(h.slot)!)
    .sort();
}

/** Whether a skill holds a word, as reranking reads it: 2 topical, 1 body, 0 not (and the marks cleared after). */
function presenceOf(m: SemanticModel, slot: number, word: string): number {
  const id = m.termIdOf(word) ?? -1;
  const marks = m.markPresence(slot);
  const found = id < 0 || id >= marks.length ? 0 : marks[id]!;
  m.unmarkPresence(slot);
  expect(marks.every((v) => v === 0)).toBe(true);
  return found;
}

describe('the term model read cap', () => {
  it('reads only the heaviest postings of a word more skills hold than the cap', () => {
    const model = new SemanticModel();
    const names = new Map<number, string>();
    for (let i = 0; i < 30; i++) {
      const s = skill(i, i % 6 === 0);
      model.set(i, s);
      names.set(i, s.name);
    }
    const named = [0, 6, 12, 18, 24].map((i) => `widget-${i}`).sort();
    expect(found(model, names, Number.POSITIVE_INFINITY)).toHaveLength(30);
    expect(found(model, names, 10)).toEqual(named);
    // Under the default cap an index this small is read whole.
    expect(READ_CAP).toBeGreaterThan(30);
    expect(model.search(WIDGET, 100, everyone)).toHaveLength(30);
  });

  it('answers the same whatever order the skills came in, and follows adds and removals', () => {
    const build = (order: number[]) => {
      const model = new SemanticModel();
      const names = new Map<number, string>();
      order.forEach((i, slot) => {
        const s = skill(i, i % 6 === 0);
        model.set(slot, s);
        names.set(slot, s.name);
      });
      return { model, names };
    };
    const forward = build([...Array(30).keys()]);
    const backward = build([...Array(30).keys()].reverse());
    expect(found(backward.model, backward.names, 10)).toEqual(found(forward.model, forward.names, 10));

    const { model, names } = forward;
    found(model, names, 10);
    // A heavy holder added after the head was read is found at the next search.
    model.set(30, skill(30, true));
    names.set(30, 'widget-30');
    expect(found(model, names, 10)).toContain('widget-30');
    // Removing heavy holders leaves the rest of their weight; once few enough hold the word, all are read.
    for (const slot of [0, 6, 12]) model.delete(slot);
    expect(found(model, names, 10)).toEqual(['widget-18', 'widget-24', 'widget-30']);
    for (let slot = 1; slot < 24; slot++) if (slot % 6 !== 0) model.delete(slot);
    const left = found(model, names, 10);
    expect(left).toHaveLength(8);
    expect(left).toEqual(expect.arrayContaining(['tool-25', 'widget-18', 'widget-30']));
  });
});

describe('the scratch of adding skills', () => {
  it('gives the same model when its numbering starts over every few terms', async () => {
    const words = 'invoice ledger kubernetes helm resume hiring timing hmac widget layout tax pod'.split(' ');
    const doc = (i: number) => ({
      name: `${words[i % 12]}-tool-${i}`,
      folder: i % 3 === 0 ? `folder-${i}` : '',
      description: `Helps with ${words[(i * 5) % 12]} and ${words[(i * 7) % 12]} for team ${i % 9}.`,
      headings: `Usage ${words[(i + 1) % 12]}`,
      body: Array.from({ length: 40 }, (_, k) => words[(i * k + k) % 12]).join(' ') + ` note${i}`,
    });
    const roomy = new SemanticModel();
    const tight = new SemanticModel(4);
    for (let i = 0; i < 60; i++) {
      roomy.set(i, doc(i));
      tight.set(i, doc(i));
    }
    roomy.delete(7);
    tight.delete(7);
    await roomy.mineRelated();
    await tight.mineRelated();
    for (let i = 0; i < 60; i++) expect(tight.termWeights(i)).toEqual(roomy.termWeights(i));
    for (const w of words) expect(tight.relatedTerms(w)).toEqual(roomy.relatedTerms(w));
    expect(tight.slots()).toEqual(roomy.slots());
  });
});

describe('a snapshot of the model', () => {
  const words = 'invoice ledger kubernetes helm resume hiring timing hmac widget layout tax pod'.split(' ');
  const doc = (i: number) => ({
    name: `${words[i % 12]}-tool-${i}`,
    folder: i % 3 === 0 ? `folder-${i}` : '',
    description: `Helps with ${words[(i * 5) % 12]} and ${words[(i * 7) % 12]} for team ${i % 9}, rare${i % 15} pair${i % 15}.`,
    headings: `Usage ${words[(i + 1) % 12]}`,
    body: Array.from({ length: 40 }, (_, k) => words[(i * k + k) % 12]).join(' ') + ` note${i}`,
  });
  /** Every answer a suggestion asks of a model, for every word and skill. */
  const answers = (m: SemanticModel) => {
    const queries = [...words, 'rare3', 'pair7'].map((w, i) => [
      { term: w, weight: 1, of: w },
      { term: words[(i + 3) % 12]!, weight: 0.5, of: w },
    ]);
    const message = new Set(words.slice(0, 5));
    return {
      size: m.size,
      // Bytes are an estimate that counts scratch and postings not yet compacted.
      stats: { ...m.stats(), bytes: 0 },
      slots: m.slots(),
      searches: queries.map((q) => [m.search(q, 20, everyone), m.search(q, 20, everyone, 5)]),
      terms: [...words, 'rare3', 'pair7'].map((w) => [
        m.idf(w),
        m.topicalCount(w),
        m.relatedTerms(w),
        m.termIdOf(w),
      ]),
      skills: Array.from({ length: 70 }, (_, slot) => [
        m.termWeights(slot),
        m.reverseCoverage(slot, message),
        words.map((w) => [m.match(slot, w), presenceOf(m, slot, w)]),
      ]),
      // Each reader's statistics: public skills only, one team's, two teams', an administrator's.
      views: readers.map((reader) => {
        const view = m.viewOf(reader);
        return {
          view,
          size: m.sizeFor(view),
          terms: [...words, 'rare3', 'pair7'].map((w) => [m.idf(w, view), m.topicalCount(w, view)]),
          searches: queries.map((q) => m.search(q, 20, everyone, 5, view)),
          coverage: Array.from({ length: 70 }, (_, slot) => m.reverseCoverage(slot, message, view)),
        };
      }),
    };
  };
  const readers = [
    { isAdmin: false, readableNamespaces: [] },
    { isAdmin: false, readableNamespaces: ['ACME'] },
    { isAdmin: false, readableNamespaces: ['acme', 'beta'] },
    { isAdmin: true, readableNamespaces: [] },
  ];
  /** Two teams' private skills among the public ones. */
  const ownerOf = (i: number) => (i % 7 === 0 ? 'acme' : i % 11 === 0 ? 'Beta' : null);

  it('answers a reader as a model without the private skills it may not read', async () => {
    const reader = readers[1]!;
    const whole = new SemanticModel();
    const seen = new SemanticModel();
    for (let i = 0; i < 60; i++) {
      whole.set(i, doc(i), ownerOf(i));
      // Slots kept: a search answers slots, and the outsider's model holds the same skills in them.
      if (ownerOf(i) !== 'Beta') seen.set(i, doc(i), ownerOf(i));
    }
    await whole.mineRelated();
    await seen.mineRelated();
    const view = whole.viewOf(reader);
    const own = seen.viewOf(reader);
    const queries = words.map((w, i) => [
      { term: w, weight: 1, of: w },
      { term: words[(i + 3) % 12]!, weight: 0.5, of: w },
    ]);
    expect(whole.sizeFor(view)).toBe(seen.sizeFor(own));
    for (const w of [...words, 'rare11', 'pair11', 'note22']) {
      expect([whole.idf(w, view), whole.topicalCount(w, view), whole.relatedTerms(w)]).toEqual([
        seen.idf(w, own),
        seen.topicalCount(w, own),
        seen.relatedTerms(w),
      ]);
    }
    const readable = (slot: number) => ownerOf(slot) !== 'Beta';
    for (const q of queries) {
      expect(whole.search(q, 20, readable, 5, view)).toEqual(seen.search(q, 20, readable, 5, own));
    }
  });

  it("learns from a lone team's skills in a hub of them alone, and forgets it when others arrive", async () => {
    const m = new SemanticModel();
    for (let i = 0; i < 40; i++) m.set(i, doc(i), 'acme');
    expect(m.learningGroup()).not.toBe(0);
    expect(m.slots().learning).toEqual(m.slots().all);
    await m.mineRelated();
    expect(m.stats().relatedPairs).toBeGreaterThan(10);
    expect(m.mustForget()).toBe(false);
    // Another team's skill: what was learnt from acme's must reach nobody else.
    m.set(40, doc(40), 'beta');
    expect(m.learningGroup()).toBe(0);
    expect(m.mustForget()).toBe(true);
    m.forgetLearnt();
    expect(m.stats().relatedPairs).toBe(0);
    expect(words.every((w) => m.relatedTerms(w).length === 0)).toBe(true);
    expect(m.learntFromAnother()).toBe(true);
    // Learnt again from public skills: there are none.
    await m.mineRelated();
    expect(m.learntFromAnother()).toBe(false);
    expect(m.stats().relatedPairs).toBe(0);
    expect(m.slots().learning).toEqual([]);
    // A public skill among one team's: learnt from public skills alone, nothing to forget.
    const mixed = new SemanticModel();
    for (let i = 0; i < 40; i++) mixed.set(i, doc(i), i === 0 ? null : 'acme');
    expect(mixed.learningGroup()).toBe(0);
    expect(mixed.slots().learning).toEqual([0]);
  });

  it('restores a model that answers as the one it was taken of, and takes changes alike', async () => {
    const model = new SemanticModel();
    for (let i = 0; i < 60; i++) model.set(i, doc(i), ownerOf(i));
    await model.mineRelated();
    // Removed skills (their postings not yet compacted) and one added after mining.
    for (const slot of [3, 7, 8]) model.delete(slot);
    model.set(60, doc(61));
    // A search that read a capped head before the snapshot.
    model.search([{ term: 'widget', weight: 1, of: 'widget' }], 10, everyone, 5);

    expect(model.stats().relatedPairs).toBeGreaterThan(10);
    // Pausing at every skill (a slice of 0 ms) takes and restores the same snapshot.
    const taken = await model.snapshot(new TimeSlicer(0));
    expect(taken).toEqual(await model.snapshot());
    const restored = await SemanticModel.restore(structuredClone(taken), new TimeSlicer(0));
    expect(answers(restored)).toEqual(answers(model));
    expect(await restored.snapshot()).toEqual(taken);
    expect(restored.needsRemine()).toBe(model.needsRemine());

    for (const m of [model, restored]) {
      m.set(61, doc(62), 'acme');
      m.delete(10);
      m.delete(14);
      m.set(62, doc(5));
    }
    expect(answers(restored)).toEqual(answers(model));
    await model.mineRelated();
    await restored.mineRelated();
    expect(answers(restored)).toEqual(answers(model));
  });
});
