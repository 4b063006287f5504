import { describe, expect, it } from 'vitest';
import { MEILI_SETTINGS } from '../meilisearch.js';
import { findSynonyms, nameKey, planWords, termOf, typoBudget, typoDistance } from './analyze.js';

describe('query analysis', () => {
  it('counts a transposition as one typo and stops past the budget', () => {
    expect(typoDistance('desgin', 'design', 2)).toBe(1);
    expect(typoDistance('kubernets', 'kubernetes', 2)).toBe(1);
    expect(typoDistance('abc', 'xyzxyz', 1)).toBe(2);
    expect(typoBudget(3)).toBe(0);
    expect(typoBudget(5)).toBe(1);
    expect(typoBudget(9)).toBe(2);
  });

  it('finds synonym phrases, longest first', () => {
    const [match] = findSynonyms(['write', 'release', 'notes']);
    expect(match).toMatchObject({ start: 1, end: 3 });
    expect(match?.alternatives).toContainEqual(['changelog']);
    expect(findSynonyms(['k8s'])[0]?.alternatives).toContainEqual(['kubernetes']);
  });

  it('drops stop words unless the query holds nothing else', () => {
    expect(planWords('please help me fix my ci')).toMatchObject({
      words: ['fix', 'ci'],
      ignored: ['please', 'help', 'me', 'my'],
    });
    expect(planWords('the and').words).toEqual(['the', 'and']);
    expect(planWords('🎉 --- !!').words).toEqual([]);
  });

  it('compares names without case or separators and stems words', () => {
    expect(nameKey('Skill_Creator  v2')).toBe('skill-creator-v2');
    expect(termOf('conflicts')).toBe(termOf('conflict'));
  });

  it('gives Meilisearch the same synonyms, stop words and field order', () => {
    expect(MEILI_SETTINGS.synonyms.k8s).toEqual(['kubernetes']);
    expect(MEILI_SETTINGS.synonyms['pull request']).toContain('pr');
    expect(MEILI_SETTINGS.stopWords).toContain('please');
    expect(MEILI_SETTINGS.searchableAttributes).toEqual(['name', 'description', 'headings', 'body']);
  });
});
