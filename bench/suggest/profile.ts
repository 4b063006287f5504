/**
 * `npm run bench -- suggest-profile [--database <name>] [--rounds 3] [--cpu-profile <file>] [--census]
 * [--cap-agreement] [--uncapped] [--search-draw] [--cold-words] [--searches] [--only <ids>]`: where a suggestion's time goes, in this one process (no HTTP). Builds the in-memory search engine and the
 * suggestion engine over a database (the benchmark's, BENCH_DATABASE, by default: the 56,804-skill scale
 * `--speed` measures), then answers every judged message serially `rounds` times and prints per-stage time
 * (finding the needs, the term model's search, the LSA search, the lexical search, and the rest: query
 * terms, fusion and the rerank) and the total's p50/p99, in CPU time (and the total's elapsed time). The stages are timed by wrapping the calls the
 * engine makes (so the engine carries no timing code); `--cpu-profile` writes a V8 CPU profile of the
 * measured rounds only (open it in Chrome's DevTools), and prints the functions with the most self time.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import { connectPostgres } from '@atskills/db';
import { InvertedIndex } from '../../apps/api/src/search/memory/inverted-index.js';
import { SkillIndex } from '../../apps/api/src/search/memory/skill-index.js';
import { createMemoryEngine } from '../../apps/api/src/search/memory-engine.js';
import { createPostgresEngine } from '../../apps/api/src/search/postgres.js';
import { SEARCH_DRAW } from '../../apps/api/src/search/tuning.js';
import { ANONYMOUS_VIEWER } from '../../apps/api/src/services/auth/viewer.js';
import { DenseModel } from '../../apps/api/src/suggest/dense.js';
import { createSuggestEngine, type SuggestEngineOptions } from '../../apps/api/src/suggest/engine.js';
import { READ_CAP, SemanticModel } from '../../apps/api/src/suggest/model.js';
import { extractNeeds, taskSignal } from '../../apps/api/src/suggest/needs.js';
import { benchDatabaseName, ensureDatabase } from '../lib/env.js';
import { cpuMs, percentile, round } from '../lib/stats.js';
import { defaultMessagesPath, loadMessages, SUGGEST_LIMIT } from './messages.js';

/** CPU milliseconds spent in each wrapped stage during the current request. */
const spent = { termModel: 0, lsaVector: 0, lsaNearest: 0, lexical: 0 };

/** Replaces a prototype method with one that adds its time to `spent[stage]`. */
function timeMethod<T extends object>(proto: T, method: keyof T & string, stage: keyof typeof spent): void {
  const original = proto[method] as unknown as (...args: unknown[]) => unknown;
  (proto as Record<string, unknown>)[method] = function (this: unknown, ...args: unknown[]) {
    const t = cpuMs();
    try {
      return original.apply(this, args);
    } finally {
      spent[stage] += cpuMs() - t;
    }
  };
}

/**
 * Makes the search index forget the words it has read before each search (`--cold-words`). Reads a private
 * cache, as the census does: a measurement of this benchmark, nothing the engine relies on.
 */
function forgetWordReadings(): void {
  const proto = SkillIndex.prototype as unknown as { search: (...args: unknown[]) => unknown };
  const search = proto.search;
  proto.search = function (this: { readings: { clear(): void } }, ...args: unknown[]) {
    this.readings.clear();
    return search.apply(this, args);
  };
}

/** One lexical search of a request, as `--searches` records it. */
interface LexicalSearch {
  ms: number;
  candidates: number;
  slots: number;
  terms: number;
}

/** The lexical searches of the request being answered (the first is the whole request's), with `--searches`. */
let searchesOfRequest: LexicalSearch[] = [];

/**
 * Records each lexical search's CPU time and size (`--searches`): the candidates it drew and scored, its
 * scoring slots (the query's words) and the terms they read (with completions, corrections, synonyms).
 * Reads the inverted index's private candidate count, as the census does: a measurement, nothing the
 * engine relies on. Wraps the search after `timeMethod`, so its own bookkeeping is not counted as lexical.
 */
function recordSearches(): void {
  const index = InvertedIndex.prototype as unknown as {
    score: (
      this: { candidateCount: number },
      slots: { expansions: { terms: string[] }[] }[],
      ...rest: unknown[]
    ) => unknown;
  };
  const score = index.score;
  let current: LexicalSearch | null = null;
  index.score = function (slots, ...rest) {
    const answer = score.call(this, slots, ...rest);
    if (current) {
      current.candidates += this.candidateCount;
      current.slots += slots.length;
      for (const slot of slots) for (const e of slot.expansions) current.terms += e.terms.length;
    }
    return answer;
  };
  const proto = SkillIndex.prototype as unknown as { search: (...args: unknown[]) => unknown };
  const search = proto.search;
  proto.search = function (this: unknown, ...args: unknown[]) {
    current = { ms: 0, candidates: 0, slots: 0, terms: 0 };
    const t = cpuMs();
    try {
      return search.apply(this, args);
    } finally {
      current.ms = cpuMs() - t;
      searchesOfRequest.push(current);
      current = null;
    }
  };
}

/** Prints what `--searches` recorded: the whole requests' searches against the needs'. */
function printSearches(requests: LexicalSearch[][]): void {
  const whole = requests.map((r) => r[0]).filter((s): s is LexicalSearch => s !== undefined);
  const needs = requests.flatMap((r) => r.slice(1));
  const all = [...whole, ...needs];
  const total = (l: LexicalSearch[]) => l.reduce((sum, s) => sum + s.ms, 0);
  const mean = (l: LexicalSearch[], pick: (s: LexicalSearch) => number) =>
    round(l.reduce((sum, s) => sum + pick(s), 0) / Math.max(1, l.length), 2);
  const describe = (l: LexicalSearch[]) =>
    `${l.length} searches, mean ${mean(l, (s) => s.ms)} ms, ${mean(l, (s) => s.candidates)} candidates, ${mean(l, (s) => s.slots)} words, ${mean(l, (s) => s.terms)} terms`;
  const withNeeds = requests.filter((r) => r.length > 1);
  const wholeOfThose = total(withNeeds.map((r) => r[0]!));
  console.log(
    `lexical searches: ${round(all.length / Math.max(1, requests.length), 2)} a request, ${round(total(all), 1)} ms in all`,
  );
  console.log(`  the whole request's: ${describe(whole)}`);
  console.log(`  each need's:         ${describe(needs)}`);
  console.log(
    `  requests with needs: ${withNeeds.length} of ${requests.length}; their whole-request searches ${round(wholeOfThose, 1)} ms (${Math.round((100 * wholeOfThose) / Math.max(1e-9, total(all)))}% of all lexical time)`,
  );
}

/** Read caps per posting list whose saving the census reports. */
const BEYOND_CAPS = [1000, 2000, 4000, 8000];

/** Work counted per request (see countWork). */
const work = {
  postings: 0,
  skippable: 0,
  /** Postings past the first `cap` of each list, per cap in BEYOND_CAPS (what a per-list read cap skips). */
  beyond: [0, 0, 0, 0],
  scanned: 0,
  postingsPerRequest: [] as number[],
  scannedPerRequest: [] as number[],
};

/**
 * Counts the work behind the term model's and the LSA model's time: postings read, skills scanned. Reads
 * their private structures (a census for this benchmark, nothing the engine relies on), before each call.
 */
function countWork(): void {
  /** The private fields read: the term model's vocabulary and posting lists. */
  type TermInternals = {
    vocabulary: Map<string, number>;
    df: Int32Array;
    postings: { data: Uint32Array; length: number }[];
  };
  const termSearch = SemanticModel.prototype.search;
  SemanticModel.prototype.search = function (this: SemanticModel, query, depth, admit, readCap) {
    const self = this as unknown as TermInternals;
    // What a max-score traversal could skip: the terms of least upper bound whose bounds sum below the
    // depth-th score (an upper bound per term: its weight, idf, and the largest saturation in its list).
    // Postings only: answers identical to the last bit then need every candidate that could still reach
    // the depth-th score scored again from its own terms, which cost more than the postings skipped (tried:
    // docs/performance.md, suggestions).
    const terms: { bound: number; postings: number }[] = [];
    for (const q of query) {
      const id = self.vocabulary.get(q.term);
      if (id === undefined || self.df[id]! <= 0) continue;
      const list = self.postings[id]!;
      work.postings += list.length;
      BEYOND_CAPS.forEach((cap, k) => {
        work.beyond[k]! += Math.max(0, list.length - cap);
      });
      let wmax = 0;
      for (let i = 0; i < list.length; i++) wmax = Math.max(wmax, (list.data[i]! & 0x7f) * 0.1);
      terms.push({
        bound: (q.weight * this.idf(q.term) * 2.5 * wmax) / (wmax + 0.75),
        postings: list.length,
      });
    }
    const hits = termSearch.call(this, query, depth, admit, readCap);
    if (hits.length === depth) {
      const theta = hits[depth - 1]!.score;
      terms.sort((a, b) => a.bound - b.bound);
      let sum = 0;
      for (const t of terms) {
        sum += t.bound;
        if (sum >= theta) break;
        work.skippable += t.postings;
      }
    }
    return hits;
  };
  const nearest = DenseModel.prototype.nearest;
  DenseModel.prototype.nearest = function (this: DenseModel, q, depth, admit) {
    for (const size of this.probedSizes(q)) work.scanned += size;
    return nearest.call(this, q, depth, admit);
  };
}

/** Agreement of the term model's capped lists with uncapped ones (see `--cap-agreement`). */
const agreement = {
  searches: 0,
  top10: 0,
  top50: 0,
  top10Of: 0,
  top50Of: 0,
  identical: 0,
  answers: 0,
  sameAnswers: 0,
  shown: 0,
  shownOf: 0,
};

/**
 * Runs every term-model search a second time with no read cap and counts how many of the uncapped list's
 * first 10 and 50 skills the capped list returns (in any order), and how many lists are identical.
 */
function measureCapAgreement(): void {
  const capped = SemanticModel.prototype.search;
  SemanticModel.prototype.search = function (this: SemanticModel, query, depth, admit, readCap) {
    if (readCap === Number.POSITIVE_INFINITY) return capped.call(this, query, depth, admit, readCap);
    const hits = capped.call(this, query, depth, admit, readCap);
    const exact = capped.call(this, query, depth, admit, Number.POSITIVE_INFINITY);
    const got = new Set(hits.map((h) => h.slot));
    agreement.searches++;
    exact.slice(0, 10).forEach((h) => {
      agreement.top10Of++;
      if (got.has(h.slot)) agreement.top10++;
    });
    exact.forEach((h) => {
      agreement.top50Of++;
      if (got.has(h.slot)) agreement.top50++;
    });
    if (exact.length === hits.length && exact.every((h, i) => h.slot === hits[i]!.slot))
      agreement.identical++;
    return hits;
  };
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      database: { type: 'string' },
      rounds: { type: 'string', default: '3' },
      'cpu-profile': { type: 'string' },
      /** Also count postings read and skills scanned (adds its own time to `rest` and `total`). */
      census: { type: 'boolean', default: false },
      /** Compare the term model's capped lists with uncapped ones (doubles the term model's time). */
      'cap-agreement': { type: 'boolean', default: false },
      /** Time the term model with no read cap (the baseline the cap is measured against). */
      uncapped: { type: 'boolean', default: false },
      /** Draw a search page's candidates in the lexical searches (the baseline SUGGEST_DRAW is measured against). */
      'search-draw': { type: 'boolean', default: false },
      /**
       * Every lexical search reads its words afresh (their completions, their words one typo away): the
       * benchmark repeats its messages, so otherwise every word's reading is remembered after the warm-up,
       * where a hub's real traffic keeps bringing words it has not read (it remembers 4,096 at a time).
       */
      'cold-words': { type: 'boolean', default: false },
      /** Only these judged messages (ids, comma-separated): where a slow message's time goes. */
      only: { type: 'string' },
      /**
       * Each lexical search apart: the whole request's and each need's, their time, candidates, words and
       * terms (what a change to the draws or to the searches a message runs would save); adds its own
       * bookkeeping to `rest` and `total`.
       */
      searches: { type: 'boolean', default: false },
    },
  });
  const only = values.only ? new Set(values.only.split(',')) : null;
  const judgements = loadMessages(defaultMessagesPath()).filter((j) => !only || only.has(j.id));
  if (judgements.length === 0) throw new Error(`--only ${values.only}: no judged message has these ids`);
  const url = await ensureDatabase(values.database ?? benchDatabaseName, false);
  const handle = connectPostgres({ url, max: 4 });
  try {
    let started = performance.now();
    const memory = createMemoryEngine(handle.db, createPostgresEngine(handle.db), { maxBytes: 2 ** 32 });
    await memory.build();
    const searchSeconds = (performance.now() - started) / 1000;
    started = performance.now();
    // The options object stays the engine's: `--cap-agreement` answers each message again uncapped.
    const readCap = values.uncapped ? Number.POSITIVE_INFINITY : undefined;
    const engineOptions: SuggestEngineOptions = {
      maxBytes: 2 ** 32,
      readCap,
      ...(values['search-draw'] ? { lexicalDraw: SEARCH_DRAW } : {}),
    };
    const suggest = createSuggestEngine(handle.db, memory, engineOptions);
    await suggest.build();
    const modelSeconds = (performance.now() - started) / 1000;
    const status = suggest.status();
    console.error(
      `built: search ${round(searchSeconds, 1)} s, model ${round(modelSeconds, 1)} s (${status.documents} skills, ${round(status.bytes / 2 ** 20, 1)} MiB)`,
    );
    // The lexical stage is the index's own (synchronous) search: timing the engine's awaited call would
    // also count the other needs' work that runs while it waits.
    if (values['cold-words']) forgetWordReadings();
    timeMethod(SkillIndex.prototype, 'search', 'lexical');
    if (values.searches) recordSearches();
    const searchesByRequest: LexicalSearch[][] = [];
    timeMethod(SemanticModel.prototype, 'search', 'termModel');
    timeMethod(DenseModel.prototype, 'queryVector', 'lsaVector');
    timeMethod(DenseModel.prototype, 'nearest', 'lsaNearest');

    if (values.census) countWork();
    if (values['cap-agreement']) measureCapAgreement();
    // A warm-up round (JIT, lazily built structures: impact heads, rank directories), then the measured ones.
    for (const j of judgements) await suggest.suggest(j.message, ANONYMOUS_VIEWER, SUGGEST_LIMIT);
    work.postings = 0;
    work.skippable = 0;
    work.beyond.fill(0);
    work.scanned = 0;
    const session = values['cpu-profile'] ? new Session() : null;
    if (session) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 200 });
      await session.post('Profiler.start');
    }
    const stages: Record<string, number[]> = {
      needs: [],
      termModel: [],
      lsaVector: [],
      lsaNearest: [],
      lexical: [],
      rest: [],
      total: [],
      wall: [],
    };
    const slowest: { ms: number; id: string; stages: string }[] = [];
    for (let r = 0; r < Number(values.rounds); r++) {
      for (const j of judgements) {
        spent.termModel = 0;
        spent.lsaVector = 0;
        spent.lsaNearest = 0;
        spent.lexical = 0;
        searchesOfRequest = [];
        const w0 = performance.now();
        const t0 = cpuMs();
        const answer = await suggest.suggest(j.message, ANONYMOUS_VIEWER, SUGGEST_LIMIT);
        const total = cpuMs() - t0;
        if (values['cap-agreement'] && r === 0) {
          engineOptions.readCap = Number.POSITIVE_INFINITY;
          const exact = await suggest.suggest(j.message, ANONYMOUS_VIEWER, SUGGEST_LIMIT);
          engineOptions.readCap = readCap;
          const shown = (a: typeof answer) => a.results.map((x) => x.hit.identity).join(' ');
          agreement.answers++;
          if (shown(exact) === shown(answer)) agreement.sameAnswers++;
          const got = new Set(answer.results.map((x) => x.hit.identity));
          for (const x of exact.results) {
            agreement.shownOf++;
            if (got.has(x.hit.identity)) agreement.shown++;
          }
        }
        stages.wall!.push(performance.now() - w0);
        // Finding the needs is pure: timed again apart (the engine runs it once per request).
        const t1 = cpuMs();
        taskSignal(j.message, extractNeeds(j.message).text);
        const needs = cpuMs() - t1;
        work.postingsPerRequest.push(work.postings);
        work.scannedPerRequest.push(work.scanned);
        work.postings = 0;
        work.scanned = 0;
        const wrapped = spent.termModel + spent.lsaVector + spent.lsaNearest + spent.lexical;
        stages.needs!.push(needs);
        stages.termModel!.push(spent.termModel);
        stages.lsaVector!.push(spent.lsaVector);
        stages.lsaNearest!.push(spent.lsaNearest);
        stages.lexical!.push(spent.lexical);
        const rest = Math.max(0, total - wrapped - needs);
        stages.rest!.push(rest);
        stages.total!.push(total);
        if (values.searches) searchesByRequest.push(searchesOfRequest);
        if (r === 0) {
          const part = (name: string, ms: number) => `${name} ${round(ms, 1)}`;
          slowest.push({
            ms: total,
            id: j.id,
            stages: [
              part('lexical', spent.lexical),
              part('term model', spent.termModel),
              part('lsa', spent.lsaVector + spent.lsaNearest),
              part('needs', needs),
              part('rest', rest),
            ].join(', '),
          });
        }
      }
    }
    if (session) {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(values['cpu-profile']!, JSON.stringify(profile));
      await session.post('Debugger.enable');
      await printSelfTime(session, profile);
      session.disconnect();
    }
    console.log(
      `${judgements.length} messages x ${values.rounds} rounds (CPU ms per request; wall: elapsed)`,
    );
    console.log('stage        mean    p50     p99');
    for (const [name, list] of Object.entries(stages)) {
      const mean = list.reduce((a, b) => a + b, 0) / list.length;
      console.log(
        `${name.padEnd(12)} ${round(mean, 2).toFixed(2).padStart(6)}  ${round(percentile(list, 50), 2).toFixed(2).padStart(6)}  ${round(percentile(list, 99), 2).toFixed(2).padStart(6)}`,
      );
    }
    if (values.census) {
      const mean = (l: number[]) => Math.round(l.reduce((a, b) => a + b, 0) / Math.max(1, l.length));
      const read = work.postingsPerRequest.reduce((a, b) => a + b, 0);
      const skip = Math.round((100 * work.skippable) / Math.max(1, read));
      console.log(
        `work per request: term-model postings mean ${mean(work.postingsPerRequest)} p99 ${Math.round(percentile(work.postingsPerRequest, 99))} (max-score could skip ${skip}%; a read cap per list of ${BEYOND_CAPS.map((cap, k) => `${cap} skips ${Math.round((100 * work.beyond[k]!) / Math.max(1, read))}%`).join(', ')}); LSA skills scanned mean ${mean(work.scannedPerRequest)} p99 ${Math.round(percentile(work.scannedPerRequest, 99))}`,
      );
    }
    if (values.searches) printSearches(searchesByRequest);
    if (values['cap-agreement']) {
      const share = (a: number, b: number) => round(a / Math.max(1, b), 3);
      console.log(
        `term model capped at ${READ_CAP} postings a list, against uncapped (${agreement.searches} searches): first 10 kept ${share(agreement.top10, agreement.top10Of)}, first 50 kept ${share(agreement.top50, agreement.top50Of)}, lists identical ${share(agreement.identical, agreement.searches)}; suggestions (first ${SUGGEST_LIMIT}) identical ${share(agreement.sameAnswers, agreement.answers)}, uncapped suggestions kept ${share(agreement.shown, agreement.shownOf)}`,
      );
    }
    slowest.sort((a, b) => b.ms - a.ms);
    console.log(
      `slowest: ${slowest
        .slice(0, 5)
        .map((s) => `${s.id} ${round(s.ms, 1)} ms (${s.stages})`)
        .join('; ')}`,
    );
    await suggest.close();
    await memory.close();
  } finally {
    await handle.close();
  }
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; scriptId: string; url: string; columnNumber: number };
  hitCount?: number;
}

/**
 * The functions with the most self time in a CPU profile, each with the opening of its code: tsx runs
 * every module as one line, so a position says little and anonymous functions are told apart by their text.
 */
async function printSelfTime(
  session: Session,
  profile: { nodes: ProfileNode[]; samples?: number[] },
): Promise<void> {
  const total = profile.samples?.length ?? 0;
  const byFunction = new Map<string, { hits: number; frame: ProfileNode['callFrame'] }>();
  for (const node of profile.nodes) {
    const f = node.callFrame;
    const key = `${f.scriptId}:${f.columnNumber}:${f.functionName}`;
    const held = byFunction.get(key) ?? { hits: 0, frame: f };
    held.hits += node.hitCount ?? 0;
    byFunction.set(key, held);
  }
  const top = [...byFunction.values()].sort((a, b) => b.hits - a.hits).slice(0, 30);
  const sources = new Map<string, string>();
  console.log('self time (share of samples)');
  for (const { hits, frame } of top) {
    let code = '';
    if (frame.url.startsWith('file:') && Number(frame.scriptId) > 0) {
      if (!sources.has(frame.scriptId)) {
        const got = await session
          .post('Debugger.getScriptSource', { scriptId: frame.scriptId })
          .catch(() => ({ scriptSource: '' }));
        sources.set(frame.scriptId, got.scriptSource);
      }
      code = sources.get(frame.scriptId)!.slice(frame.columnNumber, frame.columnNumber + 70);
    }
    const file = frame.url.replace(/^.*\/(apps|packages|bench|node_modules)\//, '$1/');
    console.log(
      `  ${((100 * hits) / Math.max(1, total)).toFixed(1).padStart(5)}%  ${frame.functionName || '(anonymous)'} ${file}  ${code.replace(/\s+/g, ' ')}`,
    );
  }
}
