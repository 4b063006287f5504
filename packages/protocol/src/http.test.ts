import { describe, expect, it } from 'vitest';
import {
  MenuResponse,
  ProblemDetails,
  ResolveRequest,
  ResolveResult,
  SearchQuery,
  SkillResponse,
} from './http.js';

const sha = 'ab'.repeat(32);

describe('wire schemas', () => {
  it('accepts a skill and a menu and tells them apart', () => {
    const skill: SkillResponse = {
      kind: 'skill',
      identity: 'gh:o/r/p',
      revision: 'r1',
      name: 'p',
      description: 'd',
      frontmatter: { name: 'p' },
      body: '# p',
      files: [{ path: 'SKILL.md', size: 3, sha256: sha }],
      flags: [],
      warnings: [],
    };
    expect(ResolveResult.parse(skill).kind).toBe('skill');
    const menu = MenuResponse.parse({ kind: 'menu', identity: 'gh:o/r', revision: 'r1', items: [] });
    expect(ResolveResult.parse(menu).kind).toBe('menu');
    expect(SkillResponse.safeParse({ ...skill, files: [{ path: 'x', size: -1, sha256: sha }] }).success).toBe(
      false,
    );
  });

  it('keeps problem extensions', () => {
    const problem = ProblemDetails.parse({
      type: 'about:blank',
      title: 'Over cap',
      status: 422,
      code: 'over-cap',
      count: 200,
    });
    expect(problem.count).toBe(200);
    expect(ProblemDetails.safeParse({ type: 'x', title: 't', status: 200, code: 'c' }).success).toBe(false);
  });

  it('bounds resolve batches and search queries', () => {
    const items = Array.from({ length: 129 }, (_, i) => ({ identity: `hub:t/c${i}` }));
    expect(ResolveRequest.safeParse({ items }).success).toBe(false);
    expect(ResolveRequest.safeParse({ items: items.slice(0, 128) }).success).toBe(true);
    expect(SearchQuery.parse({ q: ' pdf ' })).toEqual({ q: 'pdf', limit: 20 });
    expect(SearchQuery.safeParse({ q: '   ' }).success).toBe(false);
    expect(SearchQuery.safeParse({ q: 'x', limit: '101' }).success).toBe(false);
    // The longest GitHub repository, owner/name as answers show it, is a valid repo filter.
    const longest = `${'o'.repeat(39)}/${'n'.repeat(100)}`;
    expect(SearchQuery.safeParse({ q: 'x', repo: longest }).success).toBe(true);
    expect(SearchQuery.safeParse({ q: 'x', repo: `${longest}n` }).success).toBe(false);
  });
});
