/**
 * Meilisearch with an embeddings service (MEILI_URL and EMBEDDINGS_URL): the index declares a user-provided
 * embedder, skill documents carry the service's vectors, and a hybrid search by a need's vector gives the
 * suggestion engine its embedding list. Those tests need a real Meilisearch: skipped when MEILI_URL is not
 * set (there is none on the development machine, and it is never faked). The embeddings service is the
 * deterministic test server (test/support/embeddings-server.ts). The last test needs no Meilisearch: one
 * that cannot be reached pauses vector searches.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { Meilisearch } from 'meilisearch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { type EmbeddingsServer, startEmbeddingsServer } from '../../../test/support/embeddings-server.js';
import { MEILI_EMBEDDER } from '../src/search/meili-vectors.js';
import { createMeilisearchEngine } from '../src/search/meilisearch.js';
import { createPostgresEngine } from '../src/search/postgres.js';
import { createEmbeddingsClient, type EmbeddingsClient } from '../src/suggest/embeddings.js';
import { createSuggestEngine } from '../src/suggest/engine.js';
import { seedRepository, skillMd } from './support/seed.js';

const ANONYMOUS = { isAdmin: false, readableNamespaces: [] };
const DIMS = 32;

describe.skipIf(!process.env.MEILI_URL)('Meilisearch vectors for suggestions', () => {
  const url = process.env.MEILI_URL!;
  const apiKey = process.env.MEILI_MASTER_KEY;
  const indexName = `vectors_${randomBytes(4).toString('hex')}`;
  let client: Meilisearch;
  let db: TestDatabase;
  let service: EmbeddingsServer;
  let embeddings: EmbeddingsClient;
  const meili = () =>
    createMeilisearchEngine(db.db, { url, ...(apiKey ? { apiKey } : {}), index: indexName, embeddings });

  beforeAll(async () => {
    client = new Meilisearch({ host: url, ...(apiKey ? { apiKey } : {}) });
    db = await createTestDatabase('meili_vectors');
    service = await startEmbeddingsServer(DIMS);
    embeddings = createEmbeddingsClient({ url: service.url });
    const files: Record<string, string> = {};
    for (let i = 0; i < 10; i++)
      files[`tool-${i}/SKILL.md`] = skillMd(`tool-${i}`, `Tool number ${i} for chores`);
    files['release-notes/SKILL.md'] = skillMd('release-notes', 'Write release notes from git commits');
    await seedRepository(db.db, 'o', 'r', files);
    await meili().rebuild();
  }, 120_000);
  afterAll(async () => {
    await client
      ?.deleteIndex(indexName)
      .waitTask()
      .catch(() => {});
    await service?.close();
    await db?.drop();
  });

  it('declares the user-provided embedder and sends each skill with its vector', async () => {
    const settings = await client.index(indexName).getSettings();
    expect(settings.embedders?.[MEILI_EMBEDDER]).toMatchObject({ source: 'userProvided', dimensions: DIMS });
    const docs = await client
      .index(indexName)
      .getDocuments<{ kind: string; _vectors?: Record<string, { embeddings: number[][] } | number[]> }>({
        filter: 'kind = "skill"',
        retrieveVectors: true,
        limit: 100,
      });
    expect(docs.results).toHaveLength(11);
    for (const doc of docs.results) {
      const held = doc._vectors?.[MEILI_EMBEDDER];
      const vector = held && !Array.isArray(held) ? held.embeddings[0] : held;
      expect(vector).toHaveLength(DIMS);
    }
  });

  it('finds the skill nearest a need by hybrid search, skills only, in any process reading the index', async () => {
    const [need] = await embeddings.embed(['write release notes from my git commits']);
    // A fresh engine has applied no settings: it reads the embedder's dimensions from the index.
    const found = await meili().vectorSearch(need!, ANONYMOUS, 5);
    expect(found?.[0]).toBe('gh:o/r/release-notes');
    expect(found).not.toContain('gh:o/r');
    expect(await meili().vectorSearch(new Float32Array(DIMS + 1), ANONYMOUS, 5)).toBeNull();
    const plain = createMeilisearchEngine(db.db, { url, ...(apiKey ? { apiKey } : {}), index: indexName });
    expect(await plain.vectorSearch(need!, ANONYMOUS, 5)).toBeNull();
  });

  it("gives the suggestion engine its embedding list from Meilisearch's hybrid search", async () => {
    const engine = meili();
    const asked: string[][] = [];
    const suggestions = createSuggestEngine(db.db, createPostgresEngine(db.db), {
      maxBytes: 2 ** 28,
      embeddings,
      vectorSearch: async (vector, viewer, depth) => {
        const found = await engine.vectorSearch(vector, viewer, depth);
        asked.push(found ?? []);
        return found;
      },
    });
    try {
      await suggestions.build();
      const until = Date.now() + 10_000;
      while (suggestions.status().vectors < 11 && Date.now() < until)
        await new Promise((r) => setTimeout(r, 20));
      const answer = await suggestions.suggest('write release notes from my git commits', ANONYMOUS, 3);
      expect(answer.results[0]?.hit.identity).toBe('gh:o/r/release-notes');
      expect(asked[0]?.[0]).toBe('gh:o/r/release-notes');
    } finally {
      await suggestions.close();
    }
  });
});

describe('Meilisearch vector search while Meilisearch is down', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('meili_vectors_down');
  }, 60_000);
  afterAll(async () => {
    await db?.drop();
  });

  it('fails once, then answers null at once for a while (suggestions use the vectors they hold)', async () => {
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const engine = createMeilisearchEngine(db.db, {
      url: `http://127.0.0.1:${closed}`,
      index: 'unreachable',
      timeoutMs: 500,
      embeddings: { embed: async (texts) => texts.map(() => new Float32Array(DIMS)) },
    });
    const vector = Float32Array.from({ length: DIMS }, (_, i) => (i === 0 ? 1 : 0));
    await expect(engine.vectorSearch(vector, ANONYMOUS, 5)).rejects.toThrow();
    const started = Date.now();
    expect(await engine.vectorSearch(vector, ANONYMOUS, 5)).toBeNull();
    expect(Date.now() - started).toBeLessThan(50);
  });
});
