import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { corpusRoot, corpusSafetyFigures, MAX_SHARE } from './corpus.test-support.js';
import { SAFETY_RULES } from './index.js';

// The ceilings are what "sane" means: a rule that flags a large share of ordinary skills is noise, and
// would teach users to ignore the flags. The figures are recorded by `npm run bench -- safety-flags`
// (bench/results/safety-flags.json); the test writes nothing.
describe.skipIf(!existsSync(corpusRoot))('safety scanner on the shared corpus', () => {
  it('keeps every rule under its ceiling', () => {
    const { skills, rules } = corpusSafetyFigures();
    expect(skills).toBeGreaterThan(1000);
    for (const { id } of SAFETY_RULES) {
      expect(rules[id].shareOfSkills, `share of skills flagged by ${id}`).toBeLessThan(MAX_SHARE[id]);
    }
  });
});
