/**
 * Suggestions when the model cannot answer, through suggestSkills (what /v1/suggest, MCP `suggest_skills`
 * and the web page call): while the model builds, a 503 that says so with Retry-After, since it is coming;
 * over its memory budget (SUGGEST_MODEL_MB), a 503 naming the budget and no Retry-After, since asking
 * again changes nothing until an operator raises it. The model builds once the search index serves
 * (`startAfter`), and answers 503 while it waits; not once the index's snapshot is stored too.
 */
import { modelSnapshotHeader } from '@atskills/db';
import { type SQL, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { isHttpProblem } from '../src/problems.js';
import { SEARCH_INDEX_SNAPSHOT } from '../src/search/memory-engine.js';
import { createPostgresEngine } from '../src/search/postgres.js';
import { ANONYMOUS_VIEWER } from '../src/services/auth/viewer.js';
import { suggestSkills } from '../src/services/suggest.js';
import {
  BUILDING_RETRY_AFTER_S,
  createSuggestEngine,
  SuggestAbandonedError,
  type SuggestEngine,
} from '../src/suggest/engine.js';
import { SUGGESTION_SNAPSHOT } from '../src/suggest/snapshot.js';
import { createTestHub } from './support/app.js';
import { seedRepository, skillMd } from './support/seed.js';

const MESSAGE = 'write release notes from my git commits';

/** Runs `check` on a suggestion engine over `db` (built by `check` when it needs), closing it after. */
async function withEngine(db: TestDatabase, check: (engine: SuggestEngine) => Promise<void>): Promise<void> {
  const engine = createSuggestEngine(db.db, createPostgresEngine(db.db), { maxBytes: 2 ** 28 });
  try {
    await check(engine);
  } finally {
    await engine.close();
  }
}

/** The engine answers MESSAGE with its skill first. */
async function expectAnswers(engine: SuggestEngine): Promise<void> {
  const answer = await suggestSkills(engine, ANONYMOUS_VIEWER, MESSAGE, 3);
  expect(answer.results[0]?.identity).toBe('gh:o/r/release-notes');
}

/**
 * An in-memory-search hub over one skill whose seed ends holding the lock `statement` takes, in a
 * transaction left open until `release` (which waits for it to end; calling it again does nothing).
 */
async function hubHolding(name: string, statement: SQL) {
  let unlock: (() => void) | undefined;
  let locking: Promise<unknown> | undefined;
  const hub = await createTestHub(name, { SEARCH_ENGINE: 'memory' }, {}, async (own) => {
    await seedRepository(own.db, 'o', 'r', {
      'release-notes/SKILL.md': skillMd('release-notes', 'Write release notes from git commits'),
    });
    await new Promise<void>((locked) => {
      locking = own.db.transaction(async (tx) => {
        await tx.execute(statement);
        locked();
        await new Promise<void>((resolve) => {
          unlock = resolve;
        });
      });
    });
  });
  const release = async () => {
    unlock?.();
    await locking;
  };
  return { hub, release };
}

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
    await withEngine(db, async (engine) => {
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
      await expectAnswers(engine);
    });
  });

  it('answers 503 with Retry-After when a rebuild begins while a suggestion waits for its turn', async () => {
    await withEngine(db, async (engine) => {
      await engine.build();
      // The suggestion waits for its turn on the event loop; the rebuild drops the model meanwhile.
      const waiting = suggestSkills(engine, ANONYMOUS_VIEWER, MESSAGE, 3).catch((err: unknown) => err);
      const rebuilding = engine.build();
      expect(engine.status().ready).toBe(false);
      expect(await waiting).toMatchObject({
        status: 503,
        detail: 'Suggestions are not available yet: the suggestion model is rebuilding',
        headers: { 'retry-after': String(BUILDING_RETRY_AFTER_S) },
      });
      await rebuilding;
      await expectAnswers(engine);
    });
  });

  it('skips a suggestion whose caller left before its turn, and answers the others', async () => {
    await withEngine(db, async (engine) => {
      await engine.build();
      const left = new AbortController();
      const abandoned = engine.suggest(MESSAGE, ANONYMOUS_VIEWER, 3, undefined, { callerLeft: left.signal });
      const kept = suggestSkills(engine, ANONYMOUS_VIEWER, MESSAGE, 3, {
        callerLeft: new AbortController().signal,
      });
      // The caller's connection closes while its suggestion waits for its turn.
      left.abort();
      await expect(abandoned).rejects.toBeInstanceOf(SuggestAbandonedError);
      expect((await kept).results[0]?.identity).toBe('gh:o/r/release-notes');
      expect(engine.status().queued).toBe(0);
    });
  });

  it('builds only once `startAfter` settles, answering 503 with Retry-After while it waits', async () => {
    let searchIndexBuilt!: () => void;
    const startAfter = new Promise<void>((resolve) => {
      searchIndexBuilt = resolve;
    });
    const engine = createSuggestEngine(db.db, createPostgresEngine(db.db), { maxBytes: 2 ** 28, startAfter });
    try {
      const building = engine.build();
      // A suggestion waits up to 2 s for a build in progress: two skills build in milliseconds, so only
      // a build that has not started yet leaves this one refused.
      const refused = await suggestSkills(engine, ANONYMOUS_VIEWER, MESSAGE, 3).catch((err: unknown) => err);
      expect(refused).toMatchObject({
        status: 503,
        headers: { 'retry-after': String(BUILDING_RETRY_AFTER_S) },
      });
      expect(engine.status().ready).toBe(false);
      searchIndexBuilt();
      await building;
      const answer = await suggestSkills(engine, ANONYMOUS_VIEWER, MESSAGE, 3);
      expect(answer.results[0]?.identity).toBe('gh:o/r/release-notes');
    } finally {
      await engine.close();
    }
  });

  it('closes while waiting for `startAfter` without building', async () => {
    const engine = createSuggestEngine(db.db, createPostgresEngine(db.db), {
      maxBytes: 2 ** 28,
      startAfter: new Promise<void>(() => {}),
    });
    const building = engine.build();
    await engine.close();
    await building;
    expect(engine.status()).toMatchObject({ ready: false, documents: 0 });
    expect(engine.status().error).toBeUndefined();
  });

  it('in the app, builds after the in-memory search index it reads, one build at a time', async () => {
    const ended: string[] = [];
    let modelReadyWhenIndexWas: boolean | undefined;
    // The search index's build reads skill_uses and the model's does not: while a transaction locks that
    // table the index cannot finish, and a model built beside it (not after it) would serve regardless.
    const { hub, release } = await hubHolding(
      'suggest_after_search',
      sql`lock table skill_uses in access exclusive mode`,
    );
    try {
      void hub.app.searchIndexServes.then(() => {
        ended.push('search index');
        modelReadyWhenIndexWas = hub.app.suggestEngine.status().ready;
      });
      void hub.app.suggestEngine.firstBuild().then(() => ended.push('suggestion model'));
      // A suggestion waits 2 s for a build in progress: a model built beside the blocked index would be
      // ready by then (one skill); this one has not started.
      const waited = await hub.app.inject({
        method: 'POST',
        url: '/v1/suggest',
        payload: { message: MESSAGE },
      });
      expect(waited.statusCode).toBe(503);
      expect(waited.headers['retry-after']).toBe(String(BUILDING_RETRY_AFTER_S));
      await release();
      await hub.app.suggestEngine.firstBuild();
      expect(ended).toEqual(['search index', 'suggestion model']);
      expect(modelReadyWhenIndexWas).toBe(false);
      expect(hub.app.suggestEngine.status()).toMatchObject({ ready: true, documents: 1 });
      const answered = await hub.app.inject({
        method: 'POST',
        url: '/v1/suggest',
        payload: { message: MESSAGE },
      });
      expect(answered.json().results[0].identity).toBe('gh:o/r/release-notes');
    } finally {
      await release();
      await hub.close();
    }
  });

  it("in the app, does not wait for the search index's snapshot to be stored", async () => {
    // A writer of the search index's snapshot takes this lock (saveModelSnapshot): held here, the index
    // serves but its first build cannot end until the lock is let go.
    const { hub, release } = await hubHolding(
      'suggest_before_store',
      sql`select pg_advisory_xact_lock(hashtext(${`model_snapshot:${SEARCH_INDEX_SNAPSHOT}`}))`,
    );
    try {
      let indexBuildEnded = false;
      void hub.app.searchIndexFirstBuild.then(() => {
        indexBuildEnded = true;
      });
      await hub.app.suggestEngine.firstBuild();
      expect(hub.app.suggestEngine.status()).toMatchObject({ ready: true, documents: 1 });
      expect(indexBuildEnded).toBe(false);
      expect(await modelSnapshotHeader(hub.db.db, SUGGESTION_SNAPSHOT)).not.toBeNull();
      expect(await modelSnapshotHeader(hub.db.db, SEARCH_INDEX_SNAPSHOT)).toBeNull();
      await release();
      await hub.app.searchIndexFirstBuild;
      expect(await modelSnapshotHeader(hub.db.db, SEARCH_INDEX_SNAPSHOT)).toMatchObject({ skills: 1 });
    } finally {
      await release();
      await hub.close();
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
        /^Suggestions are not available: the suggestion model would exceed its memory budget \(0 MiB\) at 2 skills$/,
      );
      expect(refused.extensions).toEqual({});
      expect(refused.headers).toEqual({});
    } finally {
      await engine.close();
    }
  });
});
