/**
 * `npm run bench -- relevance [--reuse] [--misses memory]`: the relevance benchmark of issue 12. Seeds the
 * whole shared corpus into a database of its own (`atskills_relevance`), then runs every judged query of
 * bench/relevance/queries.json through the hub's engines (in-memory; Postgres; Meilisearch when MEILI_URL
 * is set) and through the BM25 baseline (MiniSearch) over the same skills, in this one process. Prints
 * success@1, recall@5, MRR@10 and the empty-answer rate per query kind; writes bench/results/relevance.json.
 */
import { parseArgs } from 'node:util';
import { connectPostgres } from '@atskills/db';
import type { SearchEngine } from '../../apps/api/src/search/engine.js';
import { createMeilisearchEngine } from '../../apps/api/src/search/meilisearch.js';
import { createMemoryEngine } from '../../apps/api/src/search/memory-engine.js';
import { createPostgresEngine } from '../../apps/api/src/search/postgres.js';
import { ANONYMOUS_VIEWER } from '../../apps/api/src/services/auth/viewer.js';
import { ensureDatabase } from '../lib/env.js';
import { type BenchRow, writeResult } from '../lib/report.js';
import { createBaseline } from './baseline.js';
import {
  corpusDocuments,
  figuresByKind,
  JUDGEMENTS,
  type Judgement,
  QUERY_KINDS,
  type Ranking,
} from './judgements.js';

const DEPTH = 20;

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { reuse: { type: 'boolean', default: false }, misses: { type: 'string' } },
  });
  const url = await ensureDatabase('atskills_relevance', !values.reuse);
  const handle = connectPostgres({ url, max: 4 });
  try {
    const rows = await corpusDocuments(handle.db, url);
    const live = new Set(rows.map((r) => r.identity));
    const unknown = JUDGEMENTS.flatMap((j) =>
      j.relevant.filter((id) => !live.has(id)).map((id) => `${j.q}: ${id}`),
    );
    if (unknown.length > 0) throw new Error(`judged skills missing from the index:\n${unknown.join('\n')}`);

    const postgres = createPostgresEngine(handle.db);
    const memory = createMemoryEngine(handle.db, postgres, { maxBytes: 2 ** 31 });
    await memory.build();
    const engines: [string, SearchEngine][] = [
      ['memory', memory],
      ['postgres', postgres],
    ];
    if (process.env.MEILI_URL) {
      const meili = createMeilisearchEngine(handle.db, {
        url: process.env.MEILI_URL,
        ...(process.env.MEILI_MASTER_KEY ? { apiKey: process.env.MEILI_MASTER_KEY } : {}),
        index: 'relevance_bench',
      });
      await meili.rebuild?.();
      engines.push(['meilisearch', meili]);
    }
    const started = performance.now();
    const baseline = createBaseline(rows);
    console.error(`baseline indexed ${rows.length} skills in ${Math.round(performance.now() - started)} ms`);

    const results: Record<string, { judgement: Judgement; ranking: Ranking }[]> = {};
    const run = async (name: string, answer: (q: string) => Promise<Ranking>) => {
      results[name] = [];
      for (const judgement of JUDGEMENTS)
        results[name]!.push({ judgement, ranking: await answer(judgement.q) });
    };
    for (const [name, engine] of engines) {
      await run(name, async (q) => {
        const page = await engine.search(q, {}, ANONYMOUS_VIEWER, DEPTH, undefined);
        return page.hits.filter((h) => h.kind === 'skill').map((h) => h.identity);
      });
    }
    await run('bm25 baseline (minisearch)', async (q) => baseline.search(q, DEPTH));

    const table: BenchRow[] = [];
    const summary: Record<string, ReturnType<typeof figuresByKind>> = {};
    for (const [name, list] of Object.entries(results)) {
      const f = figuresByKind(list);
      summary[name] = f;
      for (const kind of [...QUERY_KINDS, 'all'] as const) {
        table.push({
          engine: name,
          kind,
          queries: f[kind].queries,
          'success@1': f[kind].successAt1,
          'recall@5': f[kind].recallAt5,
          'mrr@10': f[kind].mrrAt10,
          empty: f[kind].emptyRate,
        });
      }
    }
    if (values.misses) {
      for (const { judgement, ranking } of results[values.misses] ?? []) {
        if (ranking[0] && judgement.relevant.includes(ranking[0])) continue;
        console.log(
          `MISS [${judgement.kind}] ${judgement.q}\n   got: ${ranking.slice(0, 3).join(' | ') || '(empty)'}\n  want: ${judgement.relevant.slice(0, 3).join(' | ')}`,
        );
      }
    }
    writeResult('relevance', table, {
      skills: rows.length,
      queries: JUDGEMENTS.length,
      summary,
      index: memory.status(),
    });
    await memory.close();
  } finally {
    await handle.close();
  }
}
