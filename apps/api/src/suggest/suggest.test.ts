import { SUGGEST_MAX_MESSAGE, SuggestBody } from '@atskills/protocol';
import { describe, expect, it } from 'vitest';
import {
  ABSTAIN_BELOW,
  calibrated,
  calibratedScore,
  isTelling,
  rerankValue,
  SHIPPED_RERANKER,
  shownScore,
  TASK_PRIOR,
  THIN_WORDS,
  taskPrior,
} from './abstain.js';
import { idfUnit } from './engine.js';
import { diversify, reciprocalRankFusion } from './fusion.js';
import { SemanticModel } from './model.js';
import { extractNeeds, taskSignal, userText } from './needs.js';

describe('task signal', () => {
  it('reads small talk, requests and neither from the wording', () => {
    for (const talk of [
      'thanks, that worked!',
      'Good night, talk tomorrow!',
      'lol that is hilarious. heading out for lunch, back in an hour',
      'hi! how are you today?',
      'never mind, all good now. thanks anyway',
    ]) {
      expect(taskSignal(talk), talk).toEqual({ request: false, smallTalk: true });
    }
    for (const ask of [
      'the CI on my PR keeps failing on lint, can you pull the Actions logs and fix it',
      'Write a postmortem for the outage',
      'how do I rotate the signing keys without downtime?',
      "I'd like a dashboard of our error budget",
    ]) {
      expect(taskSignal(ask), ask).toEqual({ request: true, smallTalk: false });
    }
    // A request thanked for still asks; a fact question asks for no task.
    expect(taskSignal('thanks! now please convert the report to pdf').request).toBe(true);
    expect(taskSignal('What is the capital of Peru?')).toEqual({ request: false, smallTalk: false });
  });

  it('turns the signal into a prior on every score', () => {
    // Asked or not, a message naming enough telling words keeps its scores.
    expect(taskPrior({ request: true, smallTalk: false, informative: 5 })).toBe(1);
    expect(taskPrior({ request: false, smallTalk: false, informative: 5 })).toBe(1);
    // A message naming at most THIN_WORDS telling words needs a stronger match, asked or not.
    expect(taskPrior({ request: true, smallTalk: false, informative: THIN_WORDS })).toBe(TASK_PRIOR.thin);
    expect(taskPrior({ request: false, smallTalk: false, informative: 1 })).toBe(TASK_PRIOR.thin);
    expect(TASK_PRIOR.thin).toBeLessThan(1);
    expect(taskPrior({ request: true, smallTalk: true, informative: 2 })).toBe(0);
    expect(taskPrior({ request: true, smallTalk: false, informative: 0 })).toBe(0);
    // Naming a skill whole lifts the thin prior's doubt, never small talk's or no telling word's.
    expect(taskPrior({ request: true, smallTalk: false, informative: 2 }, true)).toBe(1);
    expect(taskPrior({ request: true, smallTalk: true, informative: 2 }, true)).toBe(0);
    expect(taskPrior({ request: true, smallTalk: false, informative: 0 }, true)).toBe(0);
  });

  it('counts a word as telling when a tenth of the skills at most are about it, or two in a small hub', () => {
    // The corpus's size: a tenth.
    expect(isTelling(148, 1482)).toBe(true);
    expect(isTelling(149, 1482)).toBe(false);
    // The demo's 12 skills: a word its changelog and release-notes skills are about is telling, not three.
    expect(isTelling(2, 12)).toBe(true);
    expect(isTelling(3, 12)).toBe(false);
    // A word no skill is about tells nothing, however small the hub.
    expect(isTelling(0, 12)).toBe(false);
    expect(isTelling(0, 1482)).toBe(false);
  });
});

describe('need extraction', () => {
  it('sets aside code blocks, stack traces, quoted mail, paths and greetings', () => {
    const text = userText(
      [
        'hi there!',
        '> On Monday Bob wrote: deploy it',
        '```ts',
        'const x = compileTheWidget();',
        '```',
        'Traceback (most recent call last):',
        '  File "/srv/app.py", line 3, in <module>',
        '    at Object.run (/srv/index.js:10:5)',
        'please convert /home/me/report.pdf to markdown, see https://example.com/x',
      ].join('\n'),
    );
    expect(text).not.toMatch(/compileTheWidget|Bob|Traceback|index\.js|example\.com|\/home/);
    expect(text).toContain('convert');
    expect(extractNeeds('thanks, that worked!').words).toEqual([]);
    expect(extractNeeds('ok cool, sounds good').words).toEqual([]);
    expect(extractNeeds('please convert the pdf to markdown').words).toEqual(['convert', 'pdf', 'markdown']);
  });

  it('reads quoted text and logs when the own words name too little (SPEC 2.7)', () => {
    const quoted = extractNeeds('> please write the release notes by friday\n\ncan you do this for me?');
    expect(quoted.words).toEqual(expect.arrayContaining(['release', 'notes']));
    expect(quoted.whole.text).toContain('release notes');
    const logged = extractNeeds(
      'Error: lint failed\n    at eslint (/src/x.js:10:5)\n    at run (/src/y.js:3:1)\nfix it',
    );
    expect(logged.words).toEqual(expect.arrayContaining(['lint', 'fix']));
    // Own words that name a need keep the quote out, as before.
    expect(
      extractNeeds('> On Monday Bob wrote: deploy it\nplease convert the pdf to markdown').words,
    ).toEqual(['convert', 'pdf', 'markdown']);
  });

  it('sets aside the @skills: references a message makes (they are injected already)', () => {
    const refs = Array.from({ length: 20 }, (_, i) => `@skills:hub:acme/ops/nope${i}`).join(' ');
    expect(extractNeeds(`${refs} roll the checkout service back to the previous release`).words).toEqual(
      extractNeeds('roll the checkout service back to the previous release').words,
    );
    expect(userText('see @skills:gh:o/r/deploy-checklist:save, then deploy')).not.toContain('checklist');
    // Not a reference inside an address or a word.
    expect(userText('mail ops@skills:team about it')).toContain('ops@skills:team');
  });

  it('reads a message the schema accepts to its end, counted in code points as the schema counts', () => {
    // 7,990 code points (15,980 UTF-16 units) of emoji, then the request on a line of its own: within SUGGEST_MAX_MESSAGE.
    const message = `${'🙂'.repeat(7_990)}\nroll back`;
    expect(SuggestBody.safeParse({ message }).success).toBe(true);
    expect(userText(message)).toContain('roll back');
    // Past the limit nothing more is read, and no pair is split.
    const longer = userText(`${'🙂'.repeat(SUGGEST_MAX_MESSAGE)}\nroll back`);
    expect(longer).not.toContain('roll');
    expect(longer).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
  });

  it('splits a message with two needs, and keeps one need whole', () => {
    const two = extractNeeds(
      'Write a postmortem for the outage and also draft an offer letter for the new hire',
    );
    expect(two.parts.map((p) => p.text)).toEqual([
      'Write a postmortem for the outage',
      'draft an offer letter for the new hire',
    ]);
    const one = extractNeeds(
      'the CI on my PR keeps failing on lint, can you pull the Actions logs and fix it',
    );
    expect(one.parts).toEqual([]);
    expect(one.words).toEqual(expect.arrayContaining(['ci', 'pr', 'lint', 'actions', 'logs', 'fix']));
  });
});

describe('semantic model', () => {
  const model = new SemanticModel();
  const doc = (name: string, description: string, body = '') => ({
    name,
    folder: name,
    description,
    headings: '',
    body,
  });
  model.set(0, doc('changelog', 'Write release notes and a changelog from git commits'));
  model.set(1, doc('release-announce', 'Release notes announcement from commits for users'));
  model.set(2, doc('release-tagger', 'Tag a release and write the changelog'));
  model.set(3, doc('pdf', 'Extract text from pdf files', 'Tables and forms in pdf documents.'));
  model.set(4, doc('pdf-forms', 'Fill pdf forms', 'Form fields.'));
  model.set(5, doc('pdf-merge', 'Merge pdf documents'));
  model.set(6, doc('notes-writer', 'Release notes writer'));

  it('ranks by field-weighted term matches and honours visibility', () => {
    const q = [{ term: 'pdf', weight: 1, of: 'pdf' }];
    expect(model.search(q, 10, () => true).map((h) => h.slot)).toEqual(expect.arrayContaining([3, 4, 5]));
    expect(model.search(q, 10, (slot) => slot !== 3).map((h) => h.slot)).not.toContain(3);
  });

  it('mines related terms from co-occurrence, and forgets removed skills', async () => {
    await model.mineRelated();
    expect(model.relatedTerms('releas').map((r) => r.term)).toContain('note');
    expect(model.match(3, 'tabl')?.topical).toBe(false);
    expect(model.match(3, 'pdf')?.topical).toBe(true);
    model.delete(3);
    expect(model.size).toBe(6);
    expect(
      model.search([{ term: 'pdf', weight: 1, of: 'pdf' }], 10, () => true).map((h) => h.slot),
    ).not.toContain(3);
    expect(model.stats().bytes).toBeGreaterThan(0);
  });
});

describe('fusion and diversification', () => {
  it('fuses ranks: a key high in both lists wins', () => {
    const fused = reciprocalRankFusion([
      { keys: ['a', 'b', 'c'], weight: 1 },
      { keys: ['b', 'c', 'a'], weight: 1 },
    ]);
    expect([...fused].sort((x, y) => y[1] - x[1])[0]![0]).toBe('b');
  });

  it('brings the best candidate of an uncovered need up', () => {
    const ranked = [
      { key: 'a1', rank: 3, parts: [0.9, 0] },
      { key: 'a2', rank: 2.9, parts: [0.8, 0] },
      { key: 'b1', rank: 1, parts: [0, 0.7] },
    ];
    expect(diversify(ranked, 2, 0.5).map((c) => c.key)).toEqual(['a1', 'b1', 'a2']);
    expect(diversify(ranked, 1, 0.5).map((c) => c.key)).toEqual(['a1', 'a2', 'b1']);
  });
});

describe('calibrated score', () => {
  const rest = { lexicalRank: 0, semanticRank: 0, lsaRank: 0, stars: 0 };
  const weak = {
    ...rest,
    coverage: 0.1,
    topical: 0,
    topicalIdf: 0,
    allIdf: 1,
    fused: 0.3,
    agreement: false,
    dense: 0.1,
    nameCovered: 0,
    descriptionCovered: 0.05,
    partLexicalRank: 0,
    partDense: 0.1,
    partCoverage: 0.1,
    descriptionLead: 0.2,
    service: 0,
    partService: 0,
  };
  const strong = {
    ...rest,
    coverage: 0.9,
    topical: 0.8,
    topicalIdf: 20,
    allIdf: 25,
    fused: 1,
    agreement: true,
    dense: 0.7,
    nameCovered: 1,
    descriptionCovered: 0.6,
    partLexicalRank: 1,
    partDense: 0.7,
    partCoverage: 0.9,
    descriptionLead: 1,
    service: 0,
    partService: 0,
  };
  it('is in [0, 1], ordered like the reranker, and splits weak from strong evidence at the threshold', () => {
    for (const e of [weak, strong]) expect(calibratedScore(e)).toBeGreaterThanOrEqual(0);
    expect(calibratedScore(strong)).toBeLessThanOrEqual(1);
    expect(rerankValue(strong)).toBeGreaterThan(rerankValue(weak));
    expect(calibratedScore(weak)).toBeLessThan(ABSTAIN_BELOW);
    expect(calibratedScore(strong)).toBeGreaterThan(ABSTAIN_BELOW);
  });

  it('shows a first result more and a result far under the best less than its Platt score, in the same order', () => {
    const best = rerankValue(strong);
    const values = [best, best - 1, best - 3, rerankValue(weak)];
    const shown = values.map((v) => shownScore(v, best));
    // The best candidate's chance is under-stated by Platt (held out, first results it scored 0.1-0.2 were
    // right 0.29 of the time), a later one's near the top over-stated: the shown score lifts the one and
    // lowers the other.
    const middling = best - 8;
    expect(calibrated(middling)).toBeLessThan(0.5);
    expect(shownScore(middling, middling)).toBeGreaterThan(calibrated(middling));
    expect(shownScore(best - 1, best)).toBeLessThan(calibrated(best - 1));
    for (let i = 1; i < shown.length; i++) expect(shown[i]).toBeLessThan(shown[i - 1]!);
    for (const s of shown) expect(s > 0 && s < 1).toBe(true);
    // A reranker without a shown calibration (a file written before it) shows its Platt score.
    const plain = { ...SHIPPED_RERANKER, shown: undefined };
    expect(shownScore(best - 1, best, plain)).toBe(calibrated(best - 1));
  });
});

describe('idf masses across index sizes', () => {
  it('scales a smaller index up to the fitted one, and never scales a larger one down', () => {
    expect(idfUnit(10)).toBeGreaterThan(2);
    expect(idfUnit(100)).toBeGreaterThan(idfUnit(1_000));
    expect(idfUnit(1_482)).toBe(1);
    expect(idfUnit(55_543)).toBe(1);
  });
});
