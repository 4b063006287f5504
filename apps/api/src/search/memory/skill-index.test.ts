// The in-memory index at a size where a common word's postings pass the candidate budget: bounded
// candidates must still put the exact name first, score every candidate on every word, and keep the uses
// prior bounded.
import { describe, expect, it, vi } from 'vitest';
import type { SearchHit } from '../engine.js';
import { CANDIDATE_BUDGET } from '../tuning.js';
import { InvertedIndex } from './inverted-index.js';
import { MAX_WORD_READINGS, SkillIndex } from './skill-index.js';

const ANONYMOUS = { isAdmin: false, readableNamespaces: [] };

function hit(name: string, description: string, stars = 0): SearchHit {
  return {
    kind: 'skill',
    identity: `gh:acme/tools/${name}`,
    name,
    description,
    source: 'gh',
    owner: 'acme',
    container: 'tools',
    path: name,
    revision: 'r1',
    stars,
    descriptionTokens: 10,
    bodyTokens: 10,
    warnings: [],
    flags: [],
  };
}

function add(index: SkillIndex, name: string, description: string, body: string, weekUses = 0, stars = 0) {
  index.upsert({
    hit: hit(name, description, stars),
    visibility: 'public',
    headings: '',
    body,
    uses: { week: weekUses, total: weekUses },
  });
}

const names = (index: SkillIndex, q: string, limit = 5) =>
  index.search(q, {}, ANONYMOUS, limit).hits.map((h) => h.hit.name);

describe('SkillIndex at scale', () => {
  const index = new SkillIndex();
  const common = CANDIDATE_BUDGET * 3;
  for (let i = 0; i < common; i++) {
    // Every skill holds "deploy" several times in its description: stronger than one body mention.
    add(index, `runner-${i}`, 'deploy deploy deploy services to the cluster', `notes ${i}`);
  }
  add(index, 'deploy', 'Ship it', 'how to ship');
  add(index, 'kubernetes-rollout', 'Roll out to a cluster', 'then deploy once');
  add(index, 'helm-charts', 'Kubernetes charts', 'kubernetes packaging');
  add(index, 'popular-a', 'widget maker', 'widget', 0);
  add(index, 'popular-b', 'widget maker', 'widget', 500);
  index.freezeStatistics();

  it('puts the exact name first however many skills hold the word', () => {
    expect(names(index, 'deploy')[0]).toBe('deploy');
  });

  it('scores a rare word’s skills on the common word too (full score, not the drawn head only)', () => {
    // Only kubernetes-rollout holds both words; its "deploy" is one body mention, far below the head.
    expect(names(index, 'kubernetes deploy')[0]).toBe('kubernetes-rollout');
  });

  it('draws fewer candidates when a caller asks for a smaller draw, keeping what the rare words draw', () => {
    const draw = { budget: 60, perSlot: 60 };
    const page = index.search('deploy', {}, ANONYMOUS, 1000);
    const small = index.search('deploy', {}, ANONYMOUS, 1000, undefined, draw);
    // The word as typed draws two thirds of its slot's share; the exact name is drawn besides.
    expect(small.hits.length).toBeLessThanOrEqual(41);
    expect(page.hits.length).toBeGreaterThan(small.hits.length * 10);
    expect(small.hits[0]!.hit.name).toBe('deploy');
    const both = index.search('kubernetes deploy', {}, ANONYMOUS, 5, undefined, draw);
    expect(both.hits[0]!.hit.name).toBe('kubernetes-rollout');
  });

  it('pages through the drawn candidates without repeating a hit', () => {
    const seen = new Set<string>();
    let after: { score: number; identity: string } | undefined;
    for (let page = 0; page < 5; page++) {
      const result = index.search('deploy', {}, ANONYMOUS, 20, after);
      for (const h of result.hits) {
        expect(seen.has(h.hit.identity)).toBe(false);
        seen.add(h.hit.identity);
      }
      const last = result.hits[result.hits.length - 1]!;
      after = { score: last.score, identity: last.hit.identity };
    }
    expect(seen.size).toBe(100);
  });

  it('lifts an equally strong match by weekly uses, never a weaker one over a stronger', () => {
    expect(names(index, 'widget maker', 2)).toEqual(['popular-b', 'popular-a']);
    index.setUses(new Map([['gh:acme/tools/popular-a', { week: 1_000_000, total: 1_000_000 }]]));
    expect(names(index, 'widget maker', 2)).toEqual(['popular-a', 'popular-b']);
    expect(index.search('widget maker', {}, ANONYMOUS, 1).hits[0]!.hit.uses).toEqual({
      week: 1_000_000,
      total: 1_000_000,
    });
    // The exact name stays first whatever the others' popularity.
    index.setUses(new Map([['gh:acme/tools/runner-1', { week: 1_000_000, total: 1_000_000 }]]));
    expect(names(index, 'deploy')[0]).toBe('deploy');
  });
});

describe('SkillIndex name prefixes', () => {
  it('lifts names the query starts, and forgets a name once no skill holds it', () => {
    const index = new SkillIndex();
    add(index, 'pdf-processing', 'Fill forms', 'forms');
    add(index, 'pdf-processor', 'Fill forms', 'forms');
    add(index, 'pdf', 'Read documents', 'pdf pdf pdf proc processing processing');
    add(index, 'pdfproc-tools', 'Fill forms', 'forms');
    index.freezeStatistics();
    // "pdf" is whole, "proc" unfinished: both pdf-proc* names come before the skill that only mentions them.
    expect(names(index, 'pdf proc', 2).sort()).toEqual(['pdf-processing', 'pdf-processor']);
    index.remove('gh:acme/tools/pdf-processing');
    expect(names(index, 'pdf proc', 1)).toEqual(['pdf-processor']);
    index.remove('gh:acme/tools/pdf-processor');
    expect(names(index, 'pdf proc', 1)).toEqual(['pdf']);
    // Re-adding a removed name makes it a prefix match again.
    add(index, 'pdf-processing', 'Fill forms', 'forms');
    expect(names(index, 'pdf proc', 1)).toEqual(['pdf-processing']);
  });
});

describe('SkillIndex word readings', () => {
  it('keeps the words read most recently when more distinct words than it holds come by', () => {
    const index = new SkillIndex();
    add(index, 'deploy', 'Ship it', 'how to ship');
    index.freezeStatistics();
    const reads = vi.spyOn(InvertedIndex.prototype, 'nearWords');
    try {
      names(index, 'deploy');
      expect(reads).toHaveBeenCalledTimes(1);
      // Traffic's one-off words, more of them than the readings kept, with the common word among them.
      for (let i = 0; i < MAX_WORD_READINGS + 100; i++) {
        names(index, `zq${i.toString(36)}`);
        if (i % 100 === 0 && i <= MAX_WORD_READINGS - 50) names(index, 'deploy');
      }
      const before = reads.mock.calls.length;
      names(index, 'deploy');
      expect(reads.mock.calls.length).toBe(before);
      // The one-off word read longest ago was let go, and is read again.
      names(index, 'zq0');
      expect(reads.mock.calls.length).toBe(before + 1);
    } finally {
      reads.mockRestore();
    }
  });
});

describe('statistics frozen while the index was empty', () => {
  it('are due again once skills arrive, and then score as a build over those skills does', () => {
    const fill = (index: SkillIndex) => {
      for (let i = 0; i < 40; i++)
        add(index, `tool-${i}`, `review code ${i % 3 ? 'security' : 'style'}`, 'x');
      add(index, 'security-review', 'Review code for security bugs', 'threat model');
      add(index, 'code-review', 'Review a pull request', 'style and bugs');
    };
    // A hub started before its first crawl: built (and frozen) empty, then fed by the change feed.
    const started = new SkillIndex();
    started.freezeStatistics();
    expect(started.statisticsDue).toBe(false);
    fill(started);
    expect(started.statisticsDue).toBe(true);
    started.freezeStatistics();
    const built = new SkillIndex();
    fill(built);
    built.freezeStatistics();
    const scored = (index: SkillIndex) =>
      index.search('security review bugs', {}, ANONYMOUS, 10).hits.map((h) => [h.hit.name, h.score]);
    expect(scored(started)).toEqual(scored(built));
  });
});

describe('SkillIndex exact names', () => {
  it('finds a name typed without its separators though no word of it is indexed, as Postgres does', () => {
    const index = new SkillIndex();
    add(index, 'skill-creator', 'Guide for making skills', 'write a SKILL.md');
    add(index, 'mcp-builder', 'Build MCP servers', 'tools and resources');
    add(index, 'skill-share', 'Share a skill', 'skill skill creator');
    index.upsert({
      hit: { ...hit('deploy-helper', 'Ship it'), owner: 'secret', identity: 'gh:secret/tools/deploy-helper' },
      visibility: 'private',
      headings: '',
      body: 'ship',
    });
    index.freezeStatistics();
    const page = index.search('skillcreator', {}, ANONYMOUS, 5);
    expect(page.hits.map((h) => h.hit.name)).toEqual(['skill-creator']);
    // The word took part (it is a name): not reported as left out.
    expect(page.ignored).toEqual([]);
    expect(names(index, 'mcpbuilder')).toEqual(['mcp-builder']);
    // A private name is no answer, nor a reason to drop the word from `ignored`, for who may not read it.
    expect(index.search('deployhelper', {}, ANONYMOUS, 5)).toMatchObject({
      hits: [],
      ignored: ['deployhelper'],
    });
    const owner = { isAdmin: false, readableNamespaces: ['secret'] };
    expect(index.search('deployhelper', {}, owner, 5)).toMatchObject({ ignored: [] });
    expect(index.search('deployhelper', {}, owner, 5).hits.map((h) => h.hit.name)).toEqual(['deploy-helper']);
  });

  it('puts a name first through a typo that more common words are nearer to than the name’s word', () => {
    const index = new SkillIndex();
    // "creater" is one typo from create, created and creates (each more common than creator, and the
    // three corrections taken) before creator.
    for (let i = 0; i < 6; i++) add(index, `maker-${i}`, 'create created creates', 'create');
    add(index, 'skill-share', 'Share a skill you create', 'skill skill create created creates');
    add(index, 'skill-creator', 'Guide for making skills', 'write a SKILL.md');
    index.freezeStatistics();
    expect(names(index, 'skill creater', 1)).toEqual(['skill-creator']);
    expect(names(index, 'skil-creater', 1)).toEqual(['skill-creator']);
  });
});
