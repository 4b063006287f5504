import { SEARCH_MAX_QUERY, SUGGEST_MAX_MESSAGE } from '@atskills/protocol';
import { describe, expect, it } from 'vitest';
import { suggestedSkill } from '../../../../../packages/protocol/src/http.test-support.js';
import type { SuggestHitResponse } from '../../schemas.js';
import { renderSuggestPage } from './suggest-page.js';

function hit(name: string, score: number): SuggestHitResponse {
  return { ...suggestedSkill(name, score), kind: 'skill', stars: 0, bodyTokens: 100, warnings: [] };
}

/** The skill names in the order the page lists them, and the heading of the less likely ones, if any. */
function listed(page: string): { likely: string[]; unlikely: string[]; heading: string | undefined } {
  const [before, after = ''] = page.split('<section class="suggest-unlikely">');
  const names = (text: string) =>
    [...text.matchAll(/<a href="[^"]*">([a-z]+)<\/a> <span class="score"/g)].map((m) => m[1]!);
  return { likely: names(before!), unlikely: names(after), heading: /<h2>([^<]+)<\/h2>/.exec(after)?.[1] };
}

describe('the "describe your task" page', () => {
  it('lists suggestions scored under 0.1 apart, after the others, as less likely to help', () => {
    const page = renderSuggestPage({
      message: 'fix it',
      answer: { results: [hit('alpha', 0.71), hit('beta', 0.12), hit('gamma', 0.05)], abstained: false },
    });
    expect(listed(page)).toEqual({
      likely: ['alpha', 'beta'],
      unlikely: ['gamma'],
      heading: 'Less likely to help',
    });
    expect(page).toContain('score 0.05');
    // Their titles sit a level under their list's heading; the likely ones' are the page's second level.
    expect(page).toMatch(/<h3><a href="[^"]*">gamma<\/a>/);
    expect(page).toMatch(/<h2><a href="[^"]*">alpha<\/a>/);
  });

  it('shows a score under the floor rounded down, so it never reads as the floor it is listed under', () => {
    const page = renderSuggestPage({
      message: 'roll it back',
      answer: { results: [hit('alpha', 0.42), hit('beta', 0.097)], abstained: false },
    });
    expect(listed(page).unlikely).toEqual(['beta']);
    expect(page).toContain('score 0.09');
    expect(page).not.toContain('score 0.10');
    expect(page).toContain('<title>Suggested skills');
  });

  it('posts the form (a message up to the API limit stays out of the URL) and names an abstention in its title', () => {
    const page = renderSuggestPage({ message: 'thanks', answer: { results: [], abstained: true } });
    expect(page).toContain('<form method="post" action="/suggest"');
    expect(page).toContain(`maxlength="${SUGGEST_MAX_MESSAGE}"`);
    expect(page).toContain('<title>No skill fits');
    expect(page).not.toContain('name="limit"');
  });

  it('says none is likely to help when every score is under 0.1, and has no such list when none is', () => {
    const low = renderSuggestPage({
      message: 'fix it',
      answer: { results: [hit('gamma', 0.05)], abstained: false },
    });
    expect(listed(low)).toEqual({
      likely: [],
      unlikely: ['gamma'],
      heading: 'None of these is likely to help',
    });
    const high = renderSuggestPage({
      message: 'fix it',
      answer: { results: [hit('alpha', 0.5)], abstained: false },
    });
    expect(high).not.toContain('suggest-unlikely');
  });

  it('links an abstention to a search for the same words, cut to what a search takes', () => {
    const short = renderSuggestPage({
      message: 'book a table  for two',
      answer: { results: [], abstained: true },
    });
    expect(short).toContain('No skill fits');
    expect(short).toContain('href="/?q=book+a+table+for+two"');
    const long = renderSuggestPage({
      message: `${'word '.repeat(60)}tail`,
      answer: { results: [], abstained: true },
    });
    const q = new URLSearchParams(
      /href="\/\?([^"]+)">Search the hub/.exec(long)![1]!.replace(/&amp;/g, '&'),
    ).get('q')!;
    expect(q.length).toBeLessThanOrEqual(SEARCH_MAX_QUERY);
    expect(q).toMatch(/^(word )+word$/);
  });
});
