/**
 * Suggestions when the model cannot answer, through suggestSkills (what /v1/suggest, MCP `suggest_skills`
 * and the web page call): while the model builds, a 503 that says so with Retry-After, since it is coming;
 * over its memory budget (SUGGEST_MODEL_MB), a 503 naming the budget and no Retry-After, since asking
 * again changes nothing until an operator raises it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { isHttpProblem } from '../src/problems.js';
import { createPostgresEngine } from '../src/search/postgres.js';
import { ANONYMOUS_VIEWER } from '../src/services/auth/viewer.js';
import { suggestSkills } from '../src/services/suggest.js';
import { BUILDING_RETRY_AFTER_S, createSuggestEngine } from '../src/suggest/engine.js';
import { seedRepository, skillMd } from './support/seed.js';

const MESSAGE = 'write release notes from my git commits';

describe('suggestions the model cannot answer', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('suggest_unavailable');
    await seedRepository(db.db, 'o', 'r', {
      'release-notes/SKILL.md': skillMd('release-notes', 'Write release notes from git commits'),
      'pdf-extract/SKILL.md': skillMd('pdf-extract', 'Extract tables and text from PDF files'),
    });
  }, 60_000);
  afterAll(async () => {
    await db?.drop();
  });

  it('answers 503 with Retry-After until the model is built, then answers', async () => {
    const engine = createSuggestEngine(db.db, createPostgresEngine(db.db), { maxBytes: 2 ** 28 });
    try {
      const refused = await suggestSkills(engine, ANONYMOUS_VIEWER, MESSAGE, 3).catch((err: unknown) => err);
      expect(isHttpProblem(refused)).toBe(true);
      expect(refused).toMatchObject({
        status: 503,
        code: 'unavailable',
        detail: 'Suggestions are not available yet: the suggestion model is still building',
        extensions: { retryAfterSeconds: BUILDING_RETRY_AFTER_S },
        headers: { 'retry-after': String(BUILDING_RETRY_AFTER_S) },
      });
      await engine.build();
      const answer = await suggestSkills(engine, ANONYMOUS_VIEWER, MESSAGE, 3);
      expect(answer.results[0]?.identity).toBe('gh:o/r/release-notes');
    } finally {
      await engine.close();
    }
  });

  it('answers 503 naming the budget, without Retry-After, when the model would exceed it', async () => {
    const engine = createSuggestEngine(db.db, createPostgresEngine(db.db), { maxBytes: 1024 });
    try {
      await engine.build();
      const refused = await suggestSkills(engine, ANONYMOUS_VIEWER, MESSAGE, 3).catch((err: unknown) => err);
      expect(isHttpProblem(refused)).toBe(true);
      if (!isHttpProblem(refused)) return;
      expect(refused.status).toBe(503);
      expect(refused.detail).toMatch(
        /^Suggestions are not available yet: the suggestion model would exceed its memory budget \(0 MiB\) at 2 skills$/,
      );
      expect(refused.extensions).toEqual({});
      expect(refused.headers).toEqual({});
    } finally {
      await engine.close();
    }
  });
});
