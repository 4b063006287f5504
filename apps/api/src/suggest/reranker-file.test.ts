import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  calibratedScore,
  type Evidence,
  type Reranker,
  rerankValue,
  SHIPPED_RERANKER,
  weighsService,
} from './abstain.js';
import { loadRerankerFile, parseReranker, rerankerFileText } from './reranker-file.js';

const evidence: Evidence = {
  coverage: 0.5,
  topical: 0.4,
  topicalIdf: 12,
  allIdf: 20,
  fused: 0.8,
  dense: 0.6,
  nameCovered: 0.5,
  descriptionCovered: 0.3,
  lexicalRank: 0.5,
  semanticRank: 0.25,
  lsaRank: 0.2,
  stars: 3,
  agreement: true,
  partLexicalRank: 1,
  partDense: 0.6,
  partCoverage: 0.7,
  descriptionLead: 0.9,
  service: 0.7,
  partService: 0.8,
};

const file = (body: unknown) => JSON.stringify(body);
const valid = {
  format: 'atskills-reranker/1',
  weights: { fused: 2, service: 1.5, allIdf: 0.5 },
  platt: { scale: 1, bias: -4 },
  abstainBelow: 0.1,
};

describe('reranker files (SUGGEST_RERANKER)', () => {
  it('round-trips the shipped reranker to the last bit', () => {
    const again = parseReranker(rerankerFileText(SHIPPED_RERANKER, 'shipped'));
    expect(again).toEqual(SHIPPED_RERANKER);
    expect(rerankValue(evidence, again)).toBe(rerankValue(evidence));
    expect(calibratedScore(evidence, again)).toBe(calibratedScore(evidence));
    expect(weighsService(again)).toBe(false);
  });

  it('scores with the weights it names, idf masses as log(1 + x), agreement as 0 or 1', () => {
    const r: Reranker = parseReranker(file({ ...valid, weights: { allIdf: 2, agreement: 3, service: 0.5 } }));
    expect(rerankValue(evidence, r)).toBeCloseTo(2 * Math.log1p(20) + 3 + 0.5 * 0.7, 12);
    expect(rerankValue({ ...evidence, agreement: false }, r)).toBeCloseTo(2 * Math.log1p(20) + 0.5 * 0.7, 12);
    expect(calibratedScore(evidence, r)).toBeCloseTo(1 / (1 + Math.exp(-(rerankValue(evidence, r) - 4))), 12);
    expect(weighsService(r)).toBe(true);
    expect(r.abstainBelow).toBe(0.1);
  });

  it('names what is wrong: the key and the rule', () => {
    expect(() => parseReranker('{')).toThrow(/not JSON/);
    expect(() => parseReranker(file({ ...valid, format: 'v2' }))).toThrow(/^format: /);
    expect(() => parseReranker(file({ ...valid, weights: { fused: 1, stars: 1 } }))).toThrow(
      /weights: .*stars/,
    );
    expect(() => parseReranker(file({ ...valid, weights: { fused: 'high' } }))).toThrow(/weights\.fused/);
    expect(() => parseReranker(file({ ...valid, weights: { fused: 0 } }))).toThrow(
      /weights: weighs no evidence/,
    );
    expect(() => parseReranker(file({ ...valid, platt: { scale: -1, bias: 0 } }))).toThrow(/platt\.scale/);
    expect(() => parseReranker(file({ ...valid, abstainBelow: 2 }))).toThrow(/abstainBelow/);
    expect(() => parseReranker(file({ ...valid, extra: 1 }))).toThrow(/extra/);
    // The shown calibration must keep a message's order: it rises with the value and with the gap.
    const shown = { logit: 0.8, gap: 0.3, bias: 0.5 };
    expect(() => parseReranker(file({ ...valid, shown: { ...shown, logit: 0 } }))).toThrow(/shown\.logit/);
    expect(() => parseReranker(file({ ...valid, shown: { ...shown, gap: -0.1 } }))).toThrow(/shown\.gap/);
    expect(parseReranker(file({ ...valid, shown })).shown).toEqual(shown);
    expect(parseReranker(file(valid)).shown).toBeUndefined();
  });

  it('reads a file, naming the path when it cannot or when the file is wrong', () => {
    const dir = mkdtempSync(join(tmpdir(), 'reranker-'));
    const good = join(dir, 'good.json');
    writeFileSync(good, file(valid));
    expect(loadRerankerFile(good).weights).toEqual(valid.weights);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, file({ ...valid, abstainBelow: -1 }));
    expect(() => loadRerankerFile(bad)).toThrow(`${bad}: abstainBelow`);
    expect(() => loadRerankerFile(join(dir, 'missing.json'))).toThrow(/cannot read .*missing\.json: ENOENT/);
  });
});
