/**
 * The relevance query set (bench/relevance/queries.json) and how it is scored. Shared by the benchmark
 * (`npm run bench -- relevance`) and the relevance suite of `npm test` (apps/api/test/search-relevance.test.ts).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type Database, loadSearchDocuments, type SearchDocumentRow } from '@atskills/db';
import { seedCorpus } from '../../apps/api/test/support/seed.js';
import { listCorpusRepos } from '../../test/support/corpus.js';
import { indexedSkills } from '../lib/env.js';

/** The four kinds of query people and agents send (issue 12). */
export const QUERY_KINDS = ['name', 'typo', 'task', 'keyword'] as const;
export type QueryKind = (typeof QUERY_KINDS)[number];

export interface Judgement {
  kind: QueryKind;
  q: string;
  /** Identities of every skill that truly answers the query. */
  relevant: string[];
}

interface QueryFile {
  aliases: Record<string, string>;
  stars: Record<string, number>;
  sets: Record<string, string[]>;
  queries: { kind: QueryKind; q: string; relevant: string[] }[];
}

const file = JSON.parse(readFileSync(path.join(import.meta.dirname, 'queries.json'), 'utf8')) as QueryFile;

function expand(entry: string): string[] {
  if (entry.startsWith('=')) {
    const set = file.sets[entry.slice(1)];
    if (!set) throw new Error(`queries.json: unknown set ${entry}`);
    return set.flatMap(expand);
  }
  const slash = entry.indexOf('/');
  const alias = slash > 0 ? file.aliases[entry.slice(0, slash)] : undefined;
  return [alias ? `${alias}${entry.slice(slash)}` : entry];
}

/** Every judged query, relevant sets expanded to identities. */
export const JUDGEMENTS: readonly Judgement[] = file.queries.map((q) => ({
  kind: q.kind,
  q: q.q,
  relevant: [...new Set(q.relevant.flatMap(expand))],
}));

/** Seeds every shared-corpus repository with the query set's star counts; returns the identities indexed. */
export async function seedRelevanceCorpus(db: Database): Promise<string[]> {
  return seedCorpus(db, await listCorpusRepos(), file.stars);
}

/** Every search document of a benchmark database (at `url`), seeding the shared corpus first when it is empty. */
export async function corpusDocuments(db: Database, url: string): Promise<SearchDocumentRow[]> {
  if ((await indexedSkills(url)) === 0) {
    console.error('seeding the shared corpus...');
    await seedRelevanceCorpus(db);
  }
  const rows: SearchDocumentRow[] = [];
  for (let after = 0; ; ) {
    const batch = await loadSearchDocuments(db, after, 5000);
    if (batch.length === 0) break;
    rows.push(...batch);
    after = batch[batch.length - 1]!.id;
  }
  return rows;
}

/** Figures of one engine over a set of queries. */
export interface RelevanceFigures {
  queries: number;
  /** Share of queries whose first result is relevant. */
  successAt1: number;
  /** Mean share of the relevant skills (up to 5) found in the first 5 results. */
  recallAt5: number;
  /** Mean reciprocal rank of the first relevant result within 10. */
  mrrAt10: number;
  /** Share of queries answered with no result. */
  emptyRate: number;
}

/** What one query returned: skill identities, best first (collections left out: they are not judged). */
export type Ranking = string[];

/** Scores rankings against their judgements. */
export function figures(results: { judgement: Judgement; ranking: Ranking }[]): RelevanceFigures {
  let s1 = 0;
  let r5 = 0;
  let mrr = 0;
  let empty = 0;
  for (const { judgement, ranking } of results) {
    const relevant = new Set(judgement.relevant);
    if (ranking.length === 0) empty++;
    if (ranking[0] && relevant.has(ranking[0])) s1++;
    const found = ranking.slice(0, 5).filter((id) => relevant.has(id)).length;
    r5 += found / Math.min(5, relevant.size);
    const rank = ranking.slice(0, 10).findIndex((id) => relevant.has(id));
    if (rank >= 0) mrr += 1 / (rank + 1);
  }
  const n = Math.max(1, results.length);
  const round = (x: number) => Math.round((x / n) * 1000) / 1000;
  return {
    queries: results.length,
    successAt1: round(s1),
    recallAt5: round(r5),
    mrrAt10: round(mrr),
    emptyRate: round(empty),
  };
}

/** Figures per query kind and overall. */
export function figuresByKind(
  results: { judgement: Judgement; ranking: Ranking }[],
): Record<QueryKind | 'all', RelevanceFigures> {
  const out = { all: figures(results) } as Record<QueryKind | 'all', RelevanceFigures>;
  for (const kind of QUERY_KINDS) out[kind] = figures(results.filter((r) => r.judgement.kind === kind));
  return out;
}
