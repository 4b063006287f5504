/**
 * Suggestions with an embeddings service (EMBEDDINGS_URL): the index is embedded in batches, a failing
 * request is retried, and a service that is down leaves the default model answering. The service is a
 * small local server returning deterministic vectors (test/support/embeddings-server.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { type EmbeddingsServer, startEmbeddingsServer } from '../../../test/support/embeddings-server.js';
import { createPostgresEngine } from '../src/search/postgres.js';
import { calibratedScore, type Reranker, SHIPPED_RERANKER } from '../src/suggest/abstain.js';
import { createEmbeddingsClient, embeddingsEndpoint } from '../src/suggest/embeddings.js';
import { createSuggestEngine } from '../src/suggest/engine.js';
import { extractNeeds } from '../src/suggest/needs.js';
import { seedRepository, skillMd } from './support/seed.js';

const ANONYMOUS = { isAdmin: false, readableNamespaces: [] };

describe('suggestions with an embeddings service', () => {
  let db: TestDatabase;
  let service: EmbeddingsServer;
  beforeAll(async () => {
    db = await createTestDatabase('suggest_embeddings');
    service = await startEmbeddingsServer();
    const files: Record<string, string> = {};
    for (let i = 0; i < 10; i++)
      files[`tool-${i}/SKILL.md`] = skillMd(`tool-${i}`, `Tool number ${i} for chores`);
    files['release-notes/SKILL.md'] = skillMd('release-notes', 'Write release notes from git commits');
    await seedRepository(db.db, 'o', 'r', files);
  }, 60_000);
  afterAll(async () => {
    await service?.close();
    await db?.drop();
  });

  it('names the endpoint from a base URL or the full URL', () => {
    expect(embeddingsEndpoint('http://h:1')).toBe('http://h:1/v1/embeddings');
    expect(embeddingsEndpoint('http://h:1/v1/')).toBe('http://h:1/v1/embeddings');
    expect(embeddingsEndpoint('http://h:1/v1/embeddings')).toBe('http://h:1/v1/embeddings');
  });

  it('sends texts in batches, retries a failed request, and gives unit vectors', async () => {
    const client = createEmbeddingsClient({ url: service.url, batchSize: 4 });
    service.batches.length = 0;
    service.failNext(1);
    const vectors = await client.embed(['a b', 'c', 'd e f', 'g', 'h', 'i']);
    expect(service.batches).toEqual([4, 4, 2]);
    expect(vectors).toHaveLength(6);
    for (const v of vectors) expect(Math.hypot(...v)).toBeCloseTo(1, 5);
    service.failNext(5);
    await expect(client.embed(['x'])).rejects.toThrow(/503/);
    service.failNext(0);
  });

  it('embeds the index, uses the vectors, and answers from the default model when the service is down', async () => {
    const engine = createSuggestEngine(db.db, createPostgresEngine(db.db), {
      maxBytes: 2 ** 28,
      embeddings: { url: service.url, batchSize: 4 },
    });
    try {
      service.batches.length = 0;
      await engine.build();
      const until = Date.now() + 10_000;
      while (engine.status().vectors < 11 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(engine.status().vectors).toBe(11);
      expect(service.batches.every((n) => n <= 4)).toBe(true);
      const up = await engine.suggest('write release notes from my git commits', ANONYMOUS, 3);
      expect(up.results[0]?.hit.identity).toBe('gh:o/r/release-notes');
      expect(engine.status().embeddingsError).toBeUndefined();

      await service.close();
      const down = await engine.suggest('write release notes from my git commits', ANONYMOUS, 3);
      expect(down.results[0]?.hit.identity).toBe('gh:o/r/release-notes');
      expect(engine.status().embeddingsError).toBeDefined();
    } finally {
      await engine.close();
    }
  });

  it("takes the embedding list from the search engine's index when it answers, else from the vectors held", async () => {
    const calls: { vector: number[]; viewer: unknown; depth: number }[] = [];
    let answer: 'list' | 'null' | 'fail' = 'list';
    // The test above closed the shared service; this one brings its own.
    const own = await startEmbeddingsServer();
    const engine = createSuggestEngine(db.db, createPostgresEngine(db.db), {
      maxBytes: 2 ** 28,
      embeddings: { url: own.url, batchSize: 4 },
      vectorSearch: async (vector, viewer, depth) => {
        calls.push({ vector: [...vector], viewer, depth });
        if (answer === 'fail') throw new Error('meilisearch is down');
        return answer === 'null' ? null : ['gh:o/r/release-notes'];
      },
    });
    try {
      await engine.build();
      const until = Date.now() + 10_000;
      while (engine.status().vectors < 11 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      const message = 'write release notes from my git commits';
      for (const mode of ['list', 'null', 'fail'] as const) {
        answer = mode;
        calls.length = 0;
        const got = await engine.suggest(message, ANONYMOUS, 3);
        expect(got.results[0]?.hit.identity).toBe('gh:o/r/release-notes');
        // One call per need, with the service's vector of that need (the same vector the index holds).
        const [whole] = await createEmbeddingsClient({ url: own.url }).embed([
          extractNeeds(message).whole.text,
        ]);
        expect(calls.length).toBeGreaterThanOrEqual(1);
        expect(calls[0]!.vector).toEqual([...whole!]);
        expect(calls[0]!.viewer).toEqual(ANONYMOUS);
        expect(calls[0]!.depth).toBeGreaterThan(3);
      }
    } finally {
      await engine.close();
      await own.close();
    }
  });

  it('reranks by a reranker fitted to the service (SUGGEST_RERANKER), and by the shipped one while the service is down', async () => {
    const own = await startEmbeddingsServer();
    // Weighs the service's cosine alone, so its order is the service's, unlike the shipped reranker's.
    const reranker: Reranker = {
      weights: { service: 8, partService: 0 },
      platt: { scale: 1, bias: -4 },
      abstainBelow: 0.01,
    };
    const engine = createSuggestEngine(db.db, createPostgresEngine(db.db), {
      maxBytes: 2 ** 28,
      embeddings: { url: own.url, batchSize: 4 },
      reranker,
      explain: true,
    });
    try {
      await engine.build();
      const until = Date.now() + 10_000;
      while (engine.status().vectors < 11 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      const message = 'write release notes from my git commits';
      const up = await engine.suggest(message, ANONYMOUS, 5);
      const explained = up.explained!;
      expect(explained.length).toBeGreaterThan(1);
      for (const c of explained) {
        expect(c.evidence.service).not.toBe(0);
        expect(c.score).toBe(calibratedScore(c.evidence, reranker));
      }
      const byService = [...explained].sort((a, b) => b.evidence.service - a.evidence.service);
      expect(explained.map((c) => c.identity)).toEqual(byService.map((c) => c.identity));
      expect(up.results[0]?.hit.identity).toBe(byService[0]!.identity);

      await own.close();
      const down = await engine.suggest(message, ANONYMOUS, 5);
      for (const c of down.explained!) {
        expect(c.evidence.service).toBe(0);
        expect(c.score).toBe(calibratedScore(c.evidence, SHIPPED_RERANKER));
      }
      expect(down.results[0]?.hit.identity).toBe('gh:o/r/release-notes');
      expect(engine.status().embeddingsError).toBeDefined();
    } finally {
      await engine.close();
      await own.close().catch(() => {});
    }
  });
});
