import { MENU_CAP } from '@atskills/protocol';
import { describe, expect, it } from 'vitest';
import { renderRepositoryPage } from './repository-page.js';

function page(skillCount: number): string {
  return renderRepositoryPage({
    owner: 'acme',
    name: 'kit',
    status: 'indexed',
    headRevision: null,
    lastCrawledAt: null,
    skills: Array.from({ length: skillCount }, (_, i) => `gh:acme/kit/skill-${i}`),
    problems: [],
    statusUrl: 'http://hub.test/v1/repos/acme/kit',
  });
}

describe('the repository page', () => {
  it('offers the repository as a collection only when a menu may list all its skills', () => {
    expect(page(2)).toContain('href="/s/gh:acme/kit">the skills of acme/kit as a collection');
    expect(page(MENU_CAP)).toContain('as a collection');
    // Over the cap the collection page is a 422 (over-cap): no link leads there.
    expect(page(MENU_CAP + 1)).not.toContain('as a collection');
    expect(page(0)).not.toContain('as a collection');
  });
});
