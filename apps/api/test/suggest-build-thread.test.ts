/**
 * The suggestion model's first build in a worker thread (buildElsewhere, SUGGEST_BUILD_THREAD_MIN_SKILLS):
 * the thread builds and stores the model, the engine loads it and answers exactly as a model built in its
 * own thread; a stored model that can be loaded starts no thread; a thread that fails costs only a build
 * here; closing the engine stops the thread.
 */
import { deleteModelSnapshot, modelSnapshotHeader } from '@atskills/db';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { createPostgresEngine } from '../src/search/postgres.js';
import { ANONYMOUS_VIEWER } from '../src/services/auth/viewer.js';
import { buildModelInThread } from '../src/suggest/build-thread.js';
import { createSuggestEngine, type SuggestEngine, type SuggestEngineOptions } from '../src/suggest/engine.js';
import { SUGGESTION_SNAPSHOT } from '../src/suggest/snapshot.js';
import { createTestHub, type TestHub } from './support/app.js';
import { seedCorpus } from './support/seed.js';

const MESSAGES = [
  'Generate a changelog from the git commits since v1.4 for the release notes',
  "I'm stuck in a rebase with merge conflicts in three files, help me resolve them",
  'Build an MCP server that exposes our internal ticket API',
  'the tests pass locally but fail in CI, find out why',
  'thanks, that worked!',
];
const REPOSITORIES = ['anthropics/skills', 'obra/superpowers'];
const MAX_BYTES = 2 ** 28;

describe('the suggestion model built in a worker thread', () => {
  let db: TestDatabase;
  const engines: SuggestEngine[] = [];
  const errors: unknown[] = [];
  let threadCalls = 0;
  const engine = (options: Partial<SuggestEngineOptions> = {}) => {
    const e = createSuggestEngine(db.db, createPostgresEngine(db.db), {
      maxBytes: MAX_BYTES,
      snapshots: true,
      explain: true,
      onError: (err) => errors.push(err),
      ...options,
    });
    engines.push(e);
    return e;
  };
  const inThread =
    (url: string, embeddingTexts = false) =>
    (signal: AbortSignal) => {
      threadCalls++;
      return buildModelInThread({ url, maxBytes: MAX_BYTES, embeddingTexts }, signal);
    };
  /** An embeddings service in this process: every text it was asked to embed, and a vector from its length. */
  const recordingEmbedder = () => {
    const asked: string[] = [];
    return {
      asked,
      embed: async (texts: readonly string[]) => {
        asked.push(...texts);
        return texts.map((t) => Float32Array.of(t.length, 1));
      },
    };
  };
  /** Resolves once the engine has embedded every skill it holds (in the background after a build). */
  const embedded = (asked: string[], skills: number) =>
    expect.poll(() => asked.length, { timeout: 20_000 }).toBeGreaterThanOrEqual(skills);
  /** Every message's answer with its candidates' evidence: two models that answer these alike are alike. */
  const answers = (e: SuggestEngine) => Promise.all(MESSAGES.map((m) => e.suggest(m, ANONYMOUS_VIEWER, 5)));

  beforeAll(async () => {
    db = await createTestDatabase('suggest_build_thread');
    await seedCorpus(db.db, REPOSITORIES);
  }, 120_000);
  beforeEach(async () => {
    await deleteModelSnapshot(db.db, SUGGESTION_SNAPSHOT);
    errors.length = 0;
    threadCalls = 0;
  });
  afterAll(async () => {
    for (const e of engines) await e.close();
    await db?.drop();
  });

  it('is built and stored by the thread, loaded here, and answers as a model built here', async () => {
    const here = engine({ snapshots: false });
    await here.build();
    const threaded = engine({ buildElsewhere: inThread(db.url) });
    await threaded.build();
    expect(errors).toEqual([]);
    expect(threadCalls).toBe(1);
    const status = threaded.status();
    expect(status).toMatchObject({
      ready: true,
      restoreSeconds: null,
      builtInThread: true,
      documents: here.status().documents,
    });
    expect(status.buildSeconds).toBeGreaterThan(0);
    expect(await modelSnapshotHeader(db.db, SUGGESTION_SNAPSHOT)).toMatchObject({
      skills: here.status().documents,
    });
    const expected = await answers(here);
    expect(expected.some((a) => a.results.length > 0)).toBe(true);
    expect(await answers(threaded)).toEqual(expected);
  }, 120_000);

  it('keeps what a hub with an embeddings service embeds, and only then', async () => {
    const here = recordingEmbedder();
    const built = engine({ snapshots: false, embeddings: here });
    await built.build();
    const skills = built.status().documents;
    await embedded(here.asked, skills);

    // A thread started for such a hub stores the texts with the model; the hub loads it and embeds the same.
    const loaded = recordingEmbedder();
    const threaded = engine({ embeddings: loaded, buildElsewhere: inThread(db.url, true) });
    await threaded.build();
    expect(threaded.status()).toMatchObject({ ready: true, builtInThread: true });
    await embedded(loaded.asked, skills);
    expect([...loaded.asked].sort()).toEqual([...here.asked].sort());

    // A model stored without them (by a hub without the service) is not loaded by one with it: it builds.
    await deleteModelSnapshot(db.db, SUGGESTION_SNAPSHOT);
    const stored = engine();
    await stored.build();
    const rebuilt = recordingEmbedder();
    const events: string[] = [];
    const withService = engine({
      embeddings: rebuilt,
      onSnapshot: (event) => events.push(JSON.stringify(event)),
    });
    await withService.build();
    expect(withService.status()).toMatchObject({ ready: true, restoreSeconds: null });
    expect(events.join('\n')).toMatch(/stored without the texts an embeddings service embeds/);
    await embedded(rebuilt.asked, skills);
    expect([...rebuilt.asked].sort()).toEqual([...here.asked].sort());
  }, 120_000);

  it('starts no thread when a stored model can be loaded', async () => {
    await engine().build();
    const next = engine({ buildElsewhere: inThread(db.url) });
    await next.build();
    expect(threadCalls).toBe(0);
    expect(next.status()).toMatchObject({ ready: true, builtInThread: false });
    expect(next.status().restoreSeconds).toBeGreaterThan(0);
  }, 120_000);

  it('builds here when the thread fails, reporting why', async () => {
    const unreachable = 'postgres://postgres@127.0.0.1:1/nowhere';
    const fallback = engine({ buildElsewhere: inThread(unreachable) });
    await fallback.build();
    expect(threadCalls).toBe(1);
    expect(String(errors[0])).toMatch(/^Error: the suggestion model build thread failed: /);
    expect(fallback.status()).toMatchObject({ ready: true, restoreSeconds: null, builtInThread: false });
    expect(fallback.status().buildSeconds).toBeGreaterThan(0);
    expect(fallback.status().error).toBeUndefined();
  }, 120_000);

  it('stops the thread when the engine closes during its build', async () => {
    let ended: Promise<number | null> | undefined;
    const closing = engine({
      buildElsewhere: (signal) => {
        ended = buildModelInThread({ url: db.url, maxBytes: MAX_BYTES, embeddingTexts: false }, signal);
        return ended;
      },
    });
    const building = closing.build();
    // (Polling `ended` itself would wait for it: expect.poll awaits a promise the callback returns.)
    await expect.poll(() => ended !== undefined, { timeout: 10_000 }).toBe(true);
    await closing.close();
    await building;
    await expect(ended).rejects.toThrow(/^the suggestion model build thread failed: stopped$/);
    expect(closing.status()).toMatchObject({ ready: false, documents: 0 });
    expect(errors).toEqual([]);
  }, 120_000);
});

describe('SUGGEST_BUILD_THREAD_MIN_SKILLS in the app', () => {
  let hub: TestHub;
  let app: FastifyInstance;
  beforeAll(async () => {
    hub = await createTestHub(
      'suggest_thread_app',
      { SUGGEST_BUILD_THREAD_MIN_SKILLS: '1' },
      {},
      async (own) => {
        await seedCorpus(own.db, REPOSITORIES);
      },
    );
    app = hub.app;
    await app.ready();
    await app.suggestEngine.firstBuild();
  }, 120_000);
  afterAll(async () => {
    await hub?.close();
  });

  it('builds the first model in a worker thread and reports it as a build', async () => {
    const status = app.suggestEngine.status();
    expect(status).toMatchObject({ ready: true, restoreSeconds: null, builtInThread: true });
    expect(status.buildSeconds).toBeGreaterThan(0);
    const metrics = (await app.inject({ url: '/metrics' })).body;
    expect(metrics).toMatch(/^atskills_suggest_model_restore_seconds 0$/m);
    expect(metrics).toMatch(/^atskills_suggest_model_built_in_thread 1$/m);
    const answer = await app.inject({
      method: 'POST',
      url: '/v1/suggest',
      payload: { message: MESSAGES[0] },
    });
    expect(answer.statusCode).toBe(200);
    expect(answer.json().abstained).toBe(false);
  });
});
