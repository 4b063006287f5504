/**
 * `npm run bench -- suggest [--messages <file>] [--reuse] [--misses] [--speed [--workers 1,2] [--against <checkout>]] [--pool <file>]
 * [--embeddings <url>] [--reranker <file>] [--explain <file>]`: the
 * suggestion benchmark of issue 25. Seeds the shared corpus into a database of its own (`atskills_suggest`, or
 * BENCH_SUGGEST_DATABASE), then answers every judged message (bench/suggest/messages.json;
 * messages.dev.json while that is not there) three ways in this one process: the suggestion engine (what
 * /v1/suggest answers), the in-memory search engine given the whole message (what /search answers), and
 * the BM25 baseline (MiniSearch). Prints success@1, recall@5, MRR@10 and the abstention rate per kind, the
 * abstention trade-off curve, and writes bench/results/suggest.json. `--speed` also measures /v1/suggest
 * over HTTP at the 56,804-skill benchmark scale (`npm run bench -- load` first): p50/p99 at c=1 and c=16
 * with the read cache off, the model's build time and memory, for a single hub and then for `--workers`
 * hub processes (API_WORKERS) sharing the port; `--against` adds another checkout's single hub (say main
 * before a change, in a `git worktree` with its own `npm ci`) to the alternating rounds, rows marked
 * `[against]`: the only comparison of p99 this machine's drift allows. `--scale` judges the suggestions among the
 * benchmark scale's skills instead (see its option). `--embeddings` judges with an embeddings service
 * (as EMBEDDINGS_URL, every skill embedded first) and `--reranker` with a reranker file (as
 * SUGGEST_RERANKER): how an operator measures a service and the reranker fitted to it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { connectPostgres } from '@atskills/db';
import { createMemoryEngine } from '../../apps/api/src/search/memory-engine.js';
import { createPostgresEngine } from '../../apps/api/src/search/postgres.js';
import { SEARCH_DRAW } from '../../apps/api/src/search/tuning.js';
import { ANONYMOUS_VIEWER } from '../../apps/api/src/services/auth/viewer.js';
import { ABSTAIN_BELOW } from '../../apps/api/src/suggest/abstain.js';
import { createSuggestEngine, type SuggestEngineOptions } from '../../apps/api/src/suggest/engine.js';
import { loadRerankerFile } from '../../apps/api/src/suggest/reranker-file.js';
import { HOOK_SCORE_FLOOR } from '../../apps/cli/src/hook-suggest.js';
import {
  benchDatabaseName,
  type ChildServer,
  copyDatabase,
  ensureDatabase,
  repoRoot,
  requireIndexedDatabase,
  treeMemory,
} from '../lib/env.js';
import { type LoadResult, runLoad } from '../lib/load.js';
import { type BenchRow, resultsDir, writeResult } from '../lib/report.js';
import { metricValues, startApi, waitForIndex, waitForMetric } from '../lib/servers.js';
import { median, round } from '../lib/stats.js';
import { createBaseline } from '../relevance/baseline.js';
import { corpusDocuments, seedRelevanceCorpus } from '../relevance/judgements.js';
import { type Answer, copyKeys, explainLine, figuresByKind, hookViews, scoreBands } from './judgements.js';
import {
  defaultMessagesPath,
  loadMessages,
  MESSAGE_KINDS,
  type MessageJudgement,
  messageSetName,
  SUGGEST_LIMIT,
} from './messages.js';

const DEPTH = 10;
/** Thresholds of the trade-off curve (the shipped one, ABSTAIN_BELOW, among them). */
const THRESHOLDS = [...new Set([0.05, 0.08, 0.1, 0.12, 0.15, 0.2, 0.25, 0.3, 0.4, ABSTAIN_BELOW])].sort(
  (a, b) => a - b,
);

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      messages: { type: 'string' },
      reuse: { type: 'boolean', default: false },
      misses: { type: 'boolean', default: false },
      speed: { type: 'boolean', default: false },
      /** Writes every message's reranked candidates with their evidence (input of bench/suggest/fit-rerank.py). */
      explain: { type: 'string' },
      /**
       * Writes, per answerable message, the skills any of the three rankings puts in its first five that
       * the judgement does not list (pooling, as TREC does: what a reviewer should judge next).
       */
      pool: { type: 'string' },
      total: { type: 'string', default: '800' },
      /** An OpenAI-compatible embeddings service (as EMBEDDINGS_URL): every skill is embedded before judging. */
      embeddings: { type: 'string' },
      /** A reranker file (as SUGGEST_RERANKER) answering instead of the shipped reranker. */
      reranker: { type: 'string' },
      /** With --speed: the counts of hub processes (API_WORKERS) measured in turn, comma-separated. */
      workers: { type: 'string', default: '1,2' },
      /** With --speed: another checkout's single hub measured in the same alternating rounds. */
      against: { type: 'string' },
      /** With --speed: alternating measured rounds over the configurations (medians reported). */
      rounds: { type: 'string', default: '3' },
      /**
       * Judge at the benchmark scale: the shared corpus seeded into a copy of the benchmark index (54,061
       * generated skills, `npm run bench -- load` first), suggestions answered as shipped, without the term
       * model's read cap, and with a search page's lexical draw instead of SUGGEST_DRAW (no /search, no
       * BM25); writes bench/results/suggest-scale.json.
       */
      scale: { type: 'boolean', default: false },
    },
  });
  const file = values.messages ?? defaultMessagesPath();
  const judgements = loadMessages(file);
  // BENCH_SUGGEST_DATABASE: a database of one's own when two checkouts run this benchmark at once (each
  // run without --reuse drops and re-seeds it).
  const url = values.scale
    ? await scaleDatabase(!values.reuse)
    : await ensureDatabase(process.env.BENCH_SUGGEST_DATABASE ?? 'atskills_suggest', !values.reuse);
  const handle = connectPostgres({ url, max: 4 });
  const extra: Record<string, unknown> = { messagesFile: file.replace(/^.*\/bench\//, 'bench/') };
  const table: BenchRow[] = [];
  try {
    const rows = await corpusDocuments(handle.db, url);
    const live = new Set(rows.map((r) => r.identity));
    const copyKey = copyKeys(rows);
    // Skills the index does not hold (a withheld SKILL.md, a repository the seed skips) cannot be suggested:
    // they leave the judgement, and a message left with none of its skills leaves the run.
    const unknown = judgements.flatMap((j) =>
      j.relevant.filter((id) => !live.has(id)).map((id) => `${j.id}: ${id}`),
    );
    if (unknown.length > 0)
      console.error(`judged skills not in the index (left out):\n  ${unknown.join('\n  ')}`);
    const judged = judgements.flatMap((j) => {
      const relevant = j.relevant.filter((id) => live.has(id));
      if (j.kind !== 'none' && relevant.length === 0) return [];
      const needs = j.needs?.map((n) => n.filter((id) => live.has(id))).filter((n) => n.length > 0);
      return [{ ...j, relevant, ...(needs ? { needs } : {}) }];
    });
    extra.messagesLeftOut = judgements.length - judged.length;
    const memory = createMemoryEngine(handle.db, createPostgresEngine(handle.db), { maxBytes: 2 ** 32 });
    await memory.build();
    // The options object stays the engine's: the scale run answers again with the caps lifted.
    const engineOptions: SuggestEngineOptions = {
      maxBytes: 2 ** 32,
      explain: true,
      ...(values.embeddings
        ? { embeddings: { url: values.embeddings, timeoutMs: 600_000 }, queryEmbeddingTimeoutMs: 60_000 }
        : {}),
      ...(values.reranker ? { reranker: loadRerankerFile(values.reranker) } : {}),
    };
    const suggest = createSuggestEngine(handle.db, memory, engineOptions);
    let started = performance.now();
    await suggest.build();
    if (values.embeddings) await everySkillEmbedded(suggest);
    extra.model = { ...suggest.status(), buildSeconds: round((performance.now() - started) / 1000, 2) };
    started = performance.now();
    const baseline = values.scale ? null : createBaseline(rows, { plain: true });
    console.error(`baseline indexed ${rows.length} skills in ${Math.round(performance.now() - started)} ms`);

    type Result = {
      judgement: MessageJudgement;
      answer: Answer;
      best?: number;
      matched?: string[];
      scores?: number[];
    };
    const results: Record<string, Result[]> = values.scale
      ? {
          '/v1/suggest': [],
          '/v1/suggest, never abstaining': [],
          '/v1/suggest, uncapped': [],
          '/v1/suggest, search draw': [],
        }
      : {
          '/v1/suggest': [],
          '/v1/suggest, never abstaining': [],
          '/search (whole message)': [],
          'bm25 baseline': [],
        };
    const explained: unknown[] = [];
    for (const judgement of judged) {
      const s = await suggest.suggest(judgement.message, ANONYMOUS_VIEWER, DEPTH);
      results['/v1/suggest']!.push({
        judgement,
        answer: { ranking: s.results.map((r) => r.hit.identity), abstained: s.abstained },
        ...(s.best !== undefined ? { best: s.best } : {}),
        matched: s.results.slice(0, 3).map((r) => `${r.score} ${r.matched}`),
        scores: s.results.map((r) => r.score),
      });
      const all = await suggest.suggest(judgement.message, ANONYMOUS_VIEWER, DEPTH, 0);
      results['/v1/suggest, never abstaining']!.push({
        judgement,
        answer: { ranking: all.results.map((r) => r.hit.identity), abstained: false },
      });
      explained.push(explainLine(judgement, s, copyKey));
      if (values.scale) {
        engineOptions.readCap = Number.POSITIVE_INFINITY;
        const uncapped = await suggest.suggest(judgement.message, ANONYMOUS_VIEWER, DEPTH);
        engineOptions.readCap = undefined;
        results['/v1/suggest, uncapped']!.push({
          judgement,
          answer: { ranking: uncapped.results.map((r) => r.hit.identity), abstained: uncapped.abstained },
        });
        engineOptions.lexicalDraw = SEARCH_DRAW;
        const searchDraw = await suggest.suggest(judgement.message, ANONYMOUS_VIEWER, DEPTH);
        engineOptions.lexicalDraw = undefined;
        results['/v1/suggest, search draw']!.push({
          judgement,
          answer: { ranking: searchDraw.results.map((r) => r.hit.identity), abstained: searchDraw.abstained },
        });
        continue;
      }
      const page = await memory.search(judgement.message, {}, ANONYMOUS_VIEWER, DEPTH, undefined);
      results['/search (whole message)']!.push({
        judgement,
        answer: {
          ranking: page.hits.filter((h) => h.kind === 'skill').map((h) => h.identity),
          abstained: false,
        },
      });
      results['bm25 baseline']!.push({
        judgement,
        answer: { ranking: baseline!.search(judgement.message, DEPTH), abstained: false },
      });
    }
    const summary: Record<string, ReturnType<typeof figuresByKind>> = {};
    for (const [name, list] of Object.entries(results)) {
      const f = figuresByKind(list, copyKey);
      summary[name] = f;
      for (const kind of ['answerable', ...MESSAGE_KINDS] as const) {
        const k = f[kind];
        table.push({
          answered: name,
          kind,
          messages: k.messages,
          'success@1': kind === 'none' ? null : k.successAt1,
          'recall@5': kind === 'none' ? null : k.recallAt5,
          'mrr@10': kind === 'none' ? null : k.mrrAt10,
          abstained: k.abstained,
        });
      }
    }
    // Messages in other languages: the figures of each language apart (a few messages each: read with care).
    const languages = [...new Set(judged.flatMap((j) => (j.language ? [j.language] : [])))].sort();
    if (languages.length > 0) {
      const figuresOf = (name: string, language: string) => {
        const f = figuresByKind(
          (results[name] ?? []).filter((r) => r.judgement.language === language),
          copyKey,
        );
        return {
          answerable: f.answerable.messages,
          successAt1: f.answerable.successAt1,
          recallAt5: f.answerable.recallAt5,
          abstained: f.answerable.abstained,
          none: f.none.messages,
          noneAbstained: f.none.abstained,
        };
      };
      console.log('by language (answerable: success@1 / recall@5 / abstained; none: abstained)');
      extra.byLanguage = Object.fromEntries(
        languages.map((language) => {
          const s = figuresOf('/v1/suggest', language);
          const q = figuresOf('/search (whole message)', language);
          console.log(
            `  ${language}: ${s.answerable} answerable, suggest ${s.successAt1} / ${s.recallAt5} / ${s.abstained}, /search ${q.successAt1} / ${q.recallAt5}; ${s.none} none, abstained ${s.noneAbstained}`,
          );
          return [language, { '/v1/suggest': s, '/search (whole message)': q }];
        }),
      );
    }
    // The trade-off: abstention on kind none against false abstention on the others, per threshold.
    const suggested = results['/v1/suggest']!;
    const threshold = engineOptions.reranker?.abstainBelow ?? ABSTAIN_BELOW;
    const curve = [...new Set([...THRESHOLDS, threshold])]
      .sort((a, b) => a - b)
      .map((t) => {
        const none = suggested.filter((r) => r.judgement.kind === 'none');
        const others = suggested.filter((r) => r.judgement.kind !== 'none');
        const below = (r: Result) => (r.best ?? 0) < t;
        return {
          threshold: t,
          abstentionOnNone: round(none.filter(below).length / Math.max(1, none.length), 3),
          falseAbstention: round(others.filter(below).length / Math.max(1, others.length), 3),
        };
      });
    console.log('abstention trade-off (threshold: on none / false on the others)');
    for (const c of curve) console.log(`  ${c.threshold}: ${c.abstentionOnNone} / ${c.falseAbstention}`);
    // What a shown result's score means, at every place of the first five (the hook shows up to 3).
    const scored = suggested.map((r) => ({ ...r, scores: r.scores ?? [] }));
    const bands = scoreBands(scored, copyKey);
    extra.scoreBands = bands;
    console.log('shown suggestions by score (first result: judged relevant / shown; results 2-5: the same)');
    for (const b of bands) {
      const share = (t: { shown: number; relevant: number }) =>
        t.shown === 0 ? '-' : `${round(t.relevant / t.shown, 2)} of ${t.shown}`;
      console.log(`  ${b.from}-${b.to}: ${share(b.first)}; ${share(b.later)}`);
    }
    const hook = hookViews(
      scored,
      copyKey,
      [...new Set([0, 0.05, 0.1, 0.15, 0.2, HOOK_SCORE_FLOOR])].sort((a, b) => a - b),
    );
    extra.hookViews = hook;
    console.log(
      `the hook (3 suggestions) at a score floor (shipped: ${HOOK_SCORE_FLOOR}): lines a message, judged share, answerable hit`,
    );
    for (const h of hook)
      console.log(`  ${h.floor}: ${h.linesPerMessage} lines, ${h.precision} judged, ${h.hitRate} hit`);
    if (values.misses) {
      const searched = new Map((results['/search (whole message)'] ?? []).map((r) => [r.judgement.id, r]));
      for (const r of suggested) {
        const ok =
          r.judgement.kind === 'none'
            ? r.answer.abstained
            : r.answer.ranking[0] !== undefined && r.judgement.relevant.includes(r.answer.ranking[0]);
        if (ok) continue;
        console.log(
          `MISS [${r.judgement.kind} ${r.judgement.id}] best=${r.best?.toFixed(3)} ${r.judgement.message.slice(0, 140).replace(/\s+/g, ' ')}\n   got: ${r.answer.ranking.slice(0, 3).join(' | ') || '(abstained)'}\n   ${(r.matched ?? []).join(' | ')}\n  want: ${r.judgement.relevant.slice(0, 3).join(' | ')}`,
        );
        const search = searched.get(r.judgement.id);
        if (search) console.log(`  /search: ${search.answer.ranking.slice(0, 3).join(' | ')}`);
      }
    }
    if (values.explain) writeFileSync(values.explain, explained.map((e) => JSON.stringify(e)).join('\n'));
    if (values.pool) writeFileSync(values.pool, JSON.stringify(unjudgedPool(results), null, 1));
    extra.summary = summary;
    extra.abstentionCurve = curve;
    await suggest.close();
    await memory.close();
  } finally {
    await handle.close();
  }
  const name = resultName(file, Boolean(values.scale));
  if (values.speed)
    extra.speed = await speed(
      judgements,
      Number(values.total),
      table,
      parseWorkerCounts(values.workers),
      Number(values.rounds),
      values.against ? path.resolve(values.against) : undefined,
    );
  else keepEarlierSpeed(name, extra, table);
  writeResult(name, table, extra);
}

/** The results file a run writes: `suggest` (`suggest-scale` with --scale), then `-<set>` for another message file. */
function resultName(messagesFile: string, scale: boolean): string {
  const base = scale ? 'suggest-scale' : 'suggest';
  const set = messageSetName(messagesFile);
  return set === '' ? base : `${base}-${set}`;
}

/**
 * A run without `--speed` keeps the speed figures the results file already holds (its rows too), marked with
 * the machine and date they were measured on: a relevance run must not erase a 20-minute speed run.
 */
function keepEarlierSpeed(name: string, extra: Record<string, unknown>, table: BenchRow[]): void {
  let earlier: { machine?: unknown; speed?: Record<string, unknown>; rows?: BenchRow[] };
  try {
    earlier = JSON.parse(readFileSync(path.join(resultsDir, `${name}.json`), 'utf8'));
  } catch {
    return;
  }
  if (!earlier.speed) return;
  extra.speed = { machine: earlier.speed.machine ?? earlier.machine, ...earlier.speed };
  table.push(...(earlier.rows ?? []).filter((row) => String(row.answered).includes('speed /v1/suggest')));
}

/** Waits until the engine's background embedding of the index holds every skill of its model. */
async function everySkillEmbedded(engine: {
  status(): { vectors: number; documents: number; embeddingsError?: string };
}) {
  for (;;) {
    await new Promise((r) => setTimeout(r, 2_000));
    const { vectors, documents, embeddingsError } = engine.status();
    if (embeddingsError) throw new Error(`embeddings service: ${embeddingsError}`);
    console.error(`embedded ${vectors} of ${documents} skills`);
    if (vectors >= documents) return;
  }
}

/**
 * A copy of the benchmark index (its 54,061 generated skills) with the shared corpus seeded into it: the
 * judged skills then compete with the benchmark scale's (`--scale`). Made again when `fresh`.
 */
async function scaleDatabase(fresh: boolean): Promise<string> {
  const name = `${process.env.BENCH_SUGGEST_DATABASE ?? 'atskills_suggest'}_scale`;
  await requireIndexedDatabase();
  const { url, created } = await copyDatabase(name, benchDatabaseName, fresh);
  if (created) {
    console.error(
      `copied ${benchDatabaseName} to ${name}; seeding the shared corpus beside the generated skills...`,
    );
    const handle = connectPostgres({ url, max: 4 });
    try {
      await seedRelevanceCorpus(handle.db);
    } finally {
      await handle.close();
    }
  }
  return url;
}

/**
 * /v1/suggest over HTTP at the benchmark scale, read cache off, for each count of hub processes in
 * `workerCounts` (API_WORKERS; 1 is the single hub the targets are set for): p50/p99 at c=1 and c=16.
 * Every configuration runs at once (idle ones cost memory, not CPU), each warmed at c=16, then measured
 * in `rounds` alternating rounds (the machine's speed drifts between minutes); medians are reported.
 * `against`: another checkout's single hub, started from its sources with a data folder of its own (its
 * stored structures are its code's), measured in the same rounds.
 */
async function speed(
  judgements: MessageJudgement[],
  total: number,
  table: BenchRow[],
  workerCounts: number[],
  rounds: number,
  against?: string,
): Promise<Record<string, unknown>> {
  const url = await requireIndexedDatabase();
  const requests = judgements.map((j) => ({
    method: 'POST',
    path: '/v1/suggest',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ message: j.message, limit: SUGGEST_LIMIT }),
  }));
  /** `key` names a configuration: its API_WORKERS, or `against`. */
  const hubs: { key: string; workers: number; api: ChildServer; figures: Record<string, unknown> }[] = [];
  // With another checkout, every hub builds its structures instead of loading stored ones: both checkouts
  // store theirs under the same names in the benchmark database, so one side would load what the last run
  // stored while the other builds (a loaded index's posting lists are views of one array, a built one's are
  // arrays of their own: not the same memory to read).
  const sameFooting: Record<string, string> = against ? { INDEX_SNAPSHOTS: 'false' } : {};
  const configurations = [
    ...workerCounts.map((workers) => ({ key: String(workers), workers, root: repoRoot, env: sameFooting })),
    ...(against
      ? [
          {
            key: 'against',
            workers: 1,
            root: against,
            env: {
              ATSKILLS_DATA_DIR: path.join(repoRoot, 'bench', 'work', 'hub-data-against'),
              ...sameFooting,
            },
          },
        ]
      : []),
  ];
  try {
    for (const { key, workers, root, env } of configurations) {
      const api = await startApi(
        url,
        { SEARCH_ENGINE: 'memory', READ_CACHE_MB: '0', API_WORKERS: String(workers), ...env },
        root,
      );
      hubs.push({ key, workers, api, figures: {} });
      const started = performance.now();
      const searchBuildSeconds = await waitForIndex(api.url, workers);
      const text = await waitForMetric(
        api.url,
        'atskills_suggest_model_ready',
        workers,
        'its suggestion model',
      );
      const longest = (name: string) => Math.max(0, ...metricValues(text, name));
      const modelBuildSeconds = longest('atskills_suggest_model_build_seconds');
      const modelRestoreSeconds = longest('atskills_suggest_model_restore_seconds');
      const searchRestoreSeconds = longest('atskills_search_index_restore_seconds');
      const modelBytes = longest('atskills_suggest_model_bytes');
      Object.assign(hubs.at(-1)!.figures, {
        // Built when nothing was stored, else restored (0 for the other): builds-restart.json has both.
        searchBuildSeconds,
        searchRestoreSeconds: round(searchRestoreSeconds, 1),
        modelBuildSeconds,
        modelRestoreSeconds: round(modelRestoreSeconds, 1),
        modelMiB: round(modelBytes / 2 ** 20, 1),
        readyAfterSeconds: round((performance.now() - started) / 1000, 1),
      });
      // Every worker's code warmed (each of the 16 connections lands on one worker).
      console.error(`warming ${workers} hub process(es)...`);
      await runLoad({ baseUrl: api.url, requests, concurrency: 16, total: requests.length * 3, warmup: 0 });
    }
    const measured = new Map<string, LoadResult[]>();
    for (let r = 0; r < rounds; r++) {
      for (const { key, workers, api } of hubs) {
        for (const c of [1, 16]) {
          console.error(
            `round ${r + 1}/${rounds}: /v1/suggest at c=${c}, ${key === 'against' ? 'against' : `${workers} hub process(es)`}...`,
          );
          const result = await runLoad({
            baseUrl: api.url,
            requests,
            concurrency: c,
            total: c === 1 ? requests.length * 2 : total,
            warmup: c === 1 ? 20 : 64,
          });
          const at = `${key}:${c}`;
          measured.set(at, [...(measured.get(at) ?? []), result]);
          console.error(
            `  p50 ${round(result.p50, 1)} / p99 ${round(result.p99, 1)} ms${result.stolen === null ? '' : `, CPU stolen by the host ${round(100 * result.stolen, 1)}%`}`,
          );
        }
      }
    }
    const out: Record<string, unknown> = { rounds };
    for (const { key, workers, api, figures } of hubs) {
      figures.apiMemory = treeMemory(api.pid);
      for (const c of [1, 16]) {
        const results = measured.get(`${key}:${c}`) ?? [];
        const med = (pick: (r: LoadResult) => number) => round(median(results.map(pick)), 3);
        const row = {
          p50: med((r) => r.p50),
          p95: med((r) => r.p95),
          p99: med((r) => r.p99),
          requestsPerSecond: med((r) => r.requestsPerSecond),
          p99ByRound: results.map((r) => r.p99),
          // A round with steal measured the machine's neighbours as much as the hub (bench/lib/cpu-steal.ts).
          stealByRound: results.map((r) => r.stolen),
          statuses: results.reduce<Record<string, number>>((all, r) => {
            for (const [status, n] of Object.entries(r.statuses)) all[status] = (all[status] ?? 0) + n;
            return all;
          }, {}),
        };
        figures[`c${c}`] = row;
        table.push({
          answered:
            key === 'against'
              ? `[against] speed /v1/suggest (read cache off)`
              : `speed /v1/suggest (read cache off)${workers > 1 ? `, API_WORKERS=${workers}` : ''}`,
          kind: `c=${c}`,
          messages: results.reduce((sum, r) => sum + r.count, 0),
          p50: row.p50,
          p99: row.p99,
          'req/s': row.requestsPerSecond,
        });
      }
      // The single hub's figures stay at the top level (earlier results are read that way).
      if (key === 'against') out.against = { checkout: against, ...figures };
      else if (workers === 1) Object.assign(out, figures);
      else out[`apiWorkers${workers}`] = figures;
    }
    return out;
  } finally {
    for (const { api } of hubs) await api.stop();
  }
}

/** `--workers 1,2` as counts of hub processes, each at least 1. */
function parseWorkerCounts(text: string | undefined): number[] {
  const counts = (text ?? '1').split(',').map((part) => Number(part.trim()));
  if (counts.length === 0 || counts.some((n) => !Number.isInteger(n) || n < 1)) {
    throw new Error(`--workers: expected counts of hub processes such as 1,2, got "${text}"`);
  }
  return counts;
}

/**
 * Per answerable message, the skills in the first five of any ranking that the judgement does not list,
 * with the rankings that put them there.
 */
function unjudgedPool(
  results: Record<string, { judgement: MessageJudgement; answer: Answer }[]>,
): { id: string; message: string; relevant: string[]; unjudged: Record<string, string[]> }[] {
  const byMessage = new Map<string, { judgement: MessageJudgement; unjudged: Map<string, string[]> }>();
  for (const [name, list] of Object.entries(results)) {
    for (const { judgement, answer } of list) {
      if (judgement.kind === 'none') continue;
      const entry = byMessage.get(judgement.id) ?? { judgement, unjudged: new Map<string, string[]>() };
      byMessage.set(judgement.id, entry);
      for (const id of answer.ranking.slice(0, 5)) {
        if (judgement.relevant.includes(id)) continue;
        entry.unjudged.set(id, [...(entry.unjudged.get(id) ?? []), name]);
      }
    }
  }
  return [...byMessage.values()]
    .filter((e) => e.unjudged.size > 0)
    .map(({ judgement, unjudged }) => ({
      id: judgement.id,
      message: judgement.message,
      relevant: judgement.relevant,
      unjudged: Object.fromEntries(unjudged),
    }));
}
