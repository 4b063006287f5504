/**
 * Hostile and odd queries (SPEC 2.1: "never a 5xx"): every one is answered with 200 or a 400 problem, by
 * every engine the hub can run without external services.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestHub, type TestHub } from './support/app.js';
import { seedRepository, skillMd } from './support/seed.js';

const QUERIES: [string, string][] = [
  ['a run of 40 hyphens', '-'.repeat(40)],
  ['hyphens around a word', `${'-'.repeat(33)}pdf${'-'.repeat(33)}`],
  ['tsquery operators only', '!(&|:*<->)'],
  ['a NUL byte', 'pdf\u0000tools'],
  ['only NUL bytes', '\u0000\u0000'],
  ['256 characters', 'a'.repeat(256)],
  ['257 characters', 'b'.repeat(257)],
  ['2,000 characters of words', 'deploy '.repeat(300)],
  ['emoji only', '🎉🚀🔥'],
  ['only stop words', 'the and of to'],
  ['quotes and backslashes', `"\\'"\\\\`],
  ['invalid UTF-8', '\ufffdx'],
  ['control characters', '\u0001\u0002\u001f'],
  ['right-to-left marks', '\u202e\u202dpdf'],
  ['many words', Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ')],
  ['a very long word', 'x'.repeat(200)],
];

describe.each(['postgres', 'memory'])('bad search input, %s engine', (engine) => {
  let hub: TestHub;
  beforeAll(async () => {
    hub = await createTestHub(`search_input_${engine}`, { SEARCH_ENGINE: engine });
    await seedRepository(hub.db.db, 'docs', 'tools', {
      'pdf-tools/SKILL.md': skillMd('pdf-tools', 'Extract text from PDF files'),
      'the-and/SKILL.md': skillMd('the-and', 'A skill whose name is stop words'),
    });
    if (engine === 'memory') {
      // The index is built at start; wait until it serves what was seeded.
      for (let i = 0; i < 100; i++) {
        const r = await hub.app.inject({ url: '/search?q=pdf-tools' });
        if (r.headers['x-search-engine'] === 'memory' && r.json().results.length > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  });
  afterAll(async () => hub?.close());

  it.each(QUERIES)('%s: 200 or a 400 problem', async (_label, q) => {
    const response = await hub.app.inject({ url: `/search?q=${encodeURIComponent(q)}` });
    expect([200, 400]).toContain(response.statusCode);
    if (response.statusCode === 400) {
      expect(response.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(response.json()).toMatchObject({ status: 400, code: expect.any(String) });
    } else {
      expect(Array.isArray(response.json().results)).toBe(true);
    }
  });

  it.each(['%ED%A0%80x', '%00', '%FF%FE', '%', '%E2%82'])(
    'raw query %s: 200 or a 400 problem',
    async (raw) => {
      const response = await hub.app.inject({ url: `/search?q=${raw}` });
      expect([200, 400]).toContain(response.statusCode);
    },
  );

  it('answers a query of only stop words with what holds them, not an empty page', async () => {
    const response = await hub.app.inject({ url: '/search?q=the+and' });
    expect(response.statusCode).toBe(200);
    expect(response.json().results.map((r: { name: string }) => r.name)).toContain('the-and');
  });

  it('lists each ignored word once, and not a word it searched for', async () => {
    const ignored = async (q: string) =>
      (await hub.app.inject({ url: `/v1/search?q=${encodeURIComponent(q)}&limit=1` })).json().ignored;
    expect(await ignored('pdf pdf pdf the the')).toEqual(['the']);
    // Words past the 16th are dropped, but pdf is searched (it is among the first 16).
    expect(await ignored(Array(20).fill('pdf').join(' '))).toBeUndefined();
    expect(await ignored(`${Array(16).fill('pdf').join(' ')} zebra zebra`)).toEqual(['zebra']);
  });

  it('keeps the word that matters when the query wraps it in hyphens', async () => {
    const response = await hub.app.inject({
      url: `/search?q=${encodeURIComponent(`${'-'.repeat(40)}pdf${'-'.repeat(40)}`)}`,
    });
    expect(response.statusCode).toBe(200);
    expect(response.json().results.map((r: { name: string }) => r.name)).toContain('pdf-tools');
  });
});
