// GET /search writes its body from per-hit JSON kept by hit object: the bytes must be those the route's
// schema writes for the same page, whatever the hits hold, and a changed hit (a new object) is written anew.
import { describe, expect, it } from 'vitest';
import { SearchPageResponse } from '../schemas.js';
import type { SearchHit } from '../search/engine.js';
import { compileSerializer } from '../serializer.js';
import { type SearchOutcome, searchPageJson, searchPageResponse } from './search.js';

const routeSerializer = compileSerializer(SearchPageResponse);

function skill(name: string, extra: Partial<SearchHit> = {}): SearchHit {
  return {
    kind: 'skill',
    identity: `gh:acme/tools/${name}`,
    name,
    description: `Does "${name}" \\ with\nnew lines, a tab\t, emoji 🚀 and é`,
    source: 'gh',
    owner: 'acme',
    container: 'tools',
    path: `skills/${name}`,
    revision: 'a'.repeat(40),
    stars: 12,
    descriptionTokens: 20,
    bodyTokens: 300,
    warnings: ['frontmatter: unknown key "x"'],
    flags: [{ rule: 'curl-pipe-sh', severity: 'high', file: 'SKILL.md', line: 3, message: 'pipes to sh' }],
    ...extra,
  };
}

const collection: SearchHit = {
  ...skill('suite'),
  kind: 'collection',
  identity: 'gh:acme/tools/suite',
  description: '4 skills',
  skillCount: 4,
  flags: [],
  warnings: [],
};

function outcome(hits: SearchHit[], extra: Partial<SearchOutcome> = {}): SearchOutcome {
  return { hits, uses: new Map(), nextCursor: null, engine: { name: 'memory' }, ...extra };
}

describe('searchPageJson', () => {
  it('writes the bytes the route schema writes, for every kind of hit and page', () => {
    const held = skill('held', { uses: { week: 3, total: 9 }, reference: '@skills:gh:acme/tools/held' });
    const pages: SearchOutcome[] = [
      outcome([]),
      outcome([held, collection, skill('unheld')], {
        uses: new Map([['gh:acme/tools/unheld', { week: 1, total: 2 }]]),
        nextCursor: 'bWVtb3J5Lng',
      }),
      outcome([held], { corrected: { kubernets: 'kubernetes' }, ignored: ['the', 'please'] }),
      outcome([skill('no-uses-anywhere'), collection], { ignored: ['x'] }),
    ];
    for (const page of pages) {
      const json = searchPageJson(page);
      expect(json).toBe(routeSerializer(searchPageResponse(page)));
      // Twice: the second answer comes from the kept JSON.
      expect(searchPageJson(page)).toBe(json);
      expect(JSON.parse(json)).toEqual(SearchPageResponse.parse(JSON.parse(json)));
    }
  });

  it('writes a changed hit anew (the engine replaces the object)', () => {
    const before = Object.freeze(skill('changing', { uses: { week: 1, total: 1 } }));
    expect(JSON.parse(searchPageJson(outcome([before]))).results[0].stars).toBe(12);
    const after = Object.freeze({ ...before, stars: 40, uses: { week: 2, total: 3 } });
    const results = JSON.parse(searchPageJson(outcome([after]))).results;
    expect(results[0]).toMatchObject({ stars: 40, uses: { week: 2, total: 3 } });
  });
});
