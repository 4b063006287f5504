/**
 * The shared relevance suite (SPEC 2.1 "Relevance"): the judged queries of bench/relevance/queries.json
 * over the whole shared corpus, run against every engine configured (in-memory and Postgres always;
 * Meilisearch when MEILI_URL is set). Floors sit a little under the measured figures (README "Search"),
 * so a change that makes any engine find the right skill less often fails the tests.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  figuresByKind,
  JUDGEMENTS,
  type QueryKind,
  type RelevanceFigures,
  seedRelevanceCorpus,
} from '../../../bench/relevance/judgements.js';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import type { SearchEngine } from '../src/search/engine.js';
import { createMeilisearchEngine } from '../src/search/meilisearch.js';
import { createMemoryEngine } from '../src/search/memory-engine.js';
import { createPostgresEngine } from '../src/search/postgres.js';

type Floors = Record<QueryKind | 'all', Partial<Omit<RelevanceFigures, 'queries' | 'emptyRate'>>> & {
  maxEmpty: number;
};

const ENGINES: [string, (db: TestDatabase) => Promise<SearchEngine>, Floors][] = [
  [
    'memory',
    async (db) => {
      const engine = createMemoryEngine(db.db, createPostgresEngine(db.db), { maxBytes: 2 ** 30 });
      await engine.build();
      return engine;
    },
    {
      all: { successAt1: 0.93, recallAt5: 0.94, mrrAt10: 0.95 },
      name: { successAt1: 0.97 },
      typo: { successAt1: 0.95 },
      task: { successAt1: 0.84 },
      keyword: { successAt1: 0.93 },
      maxEmpty: 0.01,
    },
  ],
  [
    'postgres',
    async (db) => createPostgresEngine(db.db),
    {
      all: { successAt1: 0.87, recallAt5: 0.9, mrrAt10: 0.9 },
      name: { successAt1: 0.97 },
      typo: { successAt1: 0.88 },
      task: { successAt1: 0.78 },
      keyword: { successAt1: 0.82 },
      maxEmpty: 0.02,
    },
  ],
];
if (process.env.MEILI_URL) {
  ENGINES.push([
    'meilisearch',
    async (db) => {
      const engine = createMeilisearchEngine(db.db, {
        url: process.env.MEILI_URL!,
        ...(process.env.MEILI_MASTER_KEY ? { apiKey: process.env.MEILI_MASTER_KEY } : {}),
        index: `relevance_${randomBytes(4).toString('hex')}`,
      });
      await engine.rebuild();
      return engine;
    },
    {
      all: { successAt1: 0.85, recallAt5: 0.88 },
      name: {},
      typo: {},
      task: {},
      keyword: {},
      maxEmpty: 0.02,
    },
  ]);
}

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('search_relevance');
  await seedRelevanceCorpus(db.db);
}, 120_000);
afterAll(async () => db?.drop());

describe.each(ENGINES)('relevance suite: %s', (_name, make, floors) => {
  let engine: SearchEngine;
  let figures: ReturnType<typeof figuresByKind>;
  beforeAll(async () => {
    engine = await make(db);
    const results = [];
    for (const judgement of JUDGEMENTS) {
      const page = await engine.search(
        judgement.q,
        {},
        { isAdmin: false, readableNamespaces: [] },
        20,
        undefined,
      );
      results.push({
        judgement,
        ranking: page.hits.filter((h) => h.kind === 'skill').map((h) => h.identity),
      });
    }
    figures = figuresByKind(results);
  }, 120_000);
  afterAll(async () => engine?.close?.());

  it('holds at least 150 judged queries in four kinds', () => {
    expect(figures.all.queries).toBeGreaterThanOrEqual(150);
    for (const kind of ['name', 'typo', 'task', 'keyword'] as const)
      expect(figures[kind].queries).toBeGreaterThan(30);
  });

  it.each(['all', 'name', 'typo', 'task', 'keyword'] as const)('stays above its floors: %s', (kind) => {
    const floor = floors[kind];
    if (floor.successAt1 !== undefined)
      expect(figures[kind].successAt1).toBeGreaterThanOrEqual(floor.successAt1);
    if (floor.recallAt5 !== undefined)
      expect(figures[kind].recallAt5).toBeGreaterThanOrEqual(floor.recallAt5);
    if (floor.mrrAt10 !== undefined) expect(figures[kind].mrrAt10).toBeGreaterThanOrEqual(floor.mrrAt10);
  });

  it('leaves (almost) no query without an answer', () => {
    expect(figures.all.emptyRate).toBeLessThanOrEqual(floors.maxEmpty);
  });
});
