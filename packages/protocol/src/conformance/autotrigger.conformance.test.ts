import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildResidentBlock } from '../resident-block.js';

const dir =
  process.env.ATSKILLS_CONFORMANCE_DIR ??
  path.resolve(import.meta.dirname, '../../../../..', 'shared', 'conformance');

interface AutotriggerCase {
  files: Record<string, string>;
  autotrigger: string;
  block: string;
}

const vectors = JSON.parse(readFileSync(path.join(dir, 'autotrigger.json'), 'utf8')) as {
  cases: AutotriggerCase[];
};

/** `.atskills/<folder>/SKILL.md` -> folder; other files are not skills. */
function localSkills(files: Record<string, string>): Map<string, string> {
  const skills = new Map<string, string>();
  for (const [file, content] of Object.entries(files)) {
    const match = /^\.atskills\/(.+)\/SKILL\.md$/.exec(file);
    if (match?.[1]) skills.set(match[1], content);
  }
  return skills;
}

describe('conformance: autotrigger.json', () => {
  it('has vectors', () => expect(vectors.cases.length).toBeGreaterThan(0));

  it.each(vectors.cases.map((c, i) => [i, c] as const))('case %i', (_i, c) => {
    expect(buildResidentBlock(c.autotrigger, localSkills(c.files))).toBe(c.block);
  });
});
