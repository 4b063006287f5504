import { ProblemDetails } from '@atskills/protocol';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SearchPageResponse, SkillOrMenu } from './schemas.js';
import { responseSerializer } from './serializer.js';

const route = (schema: z.ZodType) => ({ schema, method: 'GET', url: '/x', httpStatus: '200' });

const hit = {
  kind: 'skill' as const,
  identity: 'gh:acme/tools/pdf',
  reference: '@skills:gh:acme/tools/pdf',
  name: 'pdf',
  description: 'Read "PDFs" \u2028 and forms',
  source: 'gh' as const,
  repository: 'acme/tools',
  path: 'pdf',
  revision: 'r1',
  popularity: 3,
  stars: 3,
  descriptionTokens: 5,
  bodyTokens: 9,
  warnings: [],
  flags: [],
  uses: { week: 1, total: 2 },
};

describe('compiled response serializer', () => {
  it('writes a search page exactly as zod encoding then JSON.stringify would, unknown keys dropped', () => {
    const { serialize, compiled } = responseSerializer(route(SearchPageResponse));
    expect(compiled).toBe(true);
    const page = {
      results: [
        { ...hit, internal: 'not for the wire' },
        { ...hit, kind: 'collection', skillCount: 4 },
      ],
      nextCursor: null,
      corrected: { kubernets: 'kubernetes' },
      ignored: ['the'],
    };
    const out = serialize(page);
    expect(JSON.parse(out)).toEqual(JSON.parse(JSON.stringify(SearchPageResponse.encode(page as never))));
    expect(out).not.toContain('not for the wire');
  });

  it('picks the branch of a union and keeps problem members beyond the core ones', () => {
    const menu = {
      kind: 'menu',
      identity: 'gh:acme/tools',
      revision: 'r1',
      items: [{ identity: 'gh:acme/tools/pdf', name: 'pdf', description: 'PDFs' }],
    };
    const skillOrMenu = responseSerializer(route(SkillOrMenu));
    expect(skillOrMenu.compiled).toBe(true);
    const problem = responseSerializer(route(ProblemDetails));
    const body = { type: 'about:blank', title: 'Bad', status: 400, code: 'bad-request', reason: 'x' };
    expect(JSON.parse(problem.serialize(body))).toEqual(
      JSON.parse(JSON.stringify(ProblemDetails.encode(body as never))),
    );
    expect(JSON.parse(skillOrMenu.serialize(menu))).toEqual(menu);
    // An answer that fits no branch is refused, as zod refuses it (the route answers 500, never a bad body).
    expect(() => skillOrMenu.serialize({ ...menu, items: 'none' })).toThrow();
  });

  it('falls back to zod for a schema JSON Schema cannot express', () => {
    const odd = z.object({ at: z.string().transform((s) => s.length) });
    const { serialize, compiled } = responseSerializer(route(odd));
    expect(compiled).toBe(false);
    expect(() => serialize({ at: 5 })).toThrow();
  });
});
