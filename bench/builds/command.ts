/**
 * `npm run bench -- builds [--database D]`: how long the hub's in-memory builds hold the event loop, over the
 * benchmark index (`load` first). While the search index and the suggestion model build (at every start,
 * and the model's re-mining after a tenth of the index changed), the same event loop answers every request:
 * a probe, a resolve, a search answered by Postgres meanwhile. Each build runs twice in this one process:
 * unsliced (a build that never lets the event loop run between its rows: the baseline) and as shipped
 * (slices of SLICE_MS). A timer every 5 ms records how long each turn of the loop waited: the longest
 * waits, and how many exceeded 100 ms. Both builds must answer alike: every judged message's suggestions
 * and the search index's answers to their words are compared (exit 1 when one differs).
 *
 * `--http [--against <checkout>]`: the same from a client's side. Starts the API (a child process) on the
 * benchmark index and sends `HEAD /v1/skills/<identity>` (what an agent's client sends per reference, read
 * cache off) one after another from the moment it listens until both structures serve, and reports how
 * long those probes took, when each structure began to serve and the API's peak resident memory;
 * `--against` starts another checkout's API the same way first (say main before a change, in a
 * `git worktree` with its own `npm ci`), rows marked `[against]`. `--restart`: this checkout's API twice,
 * the stored suggestion model deleted before the first start (which builds and stores it) and kept for the
 * second (which restores it), and the same for the search index: what a restart costs a client with
 * INDEX_SNAPSHOTS on; `--workers N` runs API_WORKERS=N hub processes (a structure serves once it serves in
 * all of them; builds-restart-workersN.json).
 *
 * `--snapshot`: the stored structures in one process: the search index and then the suggestion model built
 * and stored, then second engines restoring them; build, store and restore times, the snapshots' sizes,
 * the event loop's longest waits in each, and every judged query's search and every judged message's
 * suggestions (with their evidence) compared (exit 1 when one differs).
 */
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { connectPostgres, type Database, deleteModelSnapshot, modelSnapshotHeader } from '@atskills/db';
import type { SnapshotEvent } from '../../apps/api/src/runtime/snapshots.js';
import { SLICE_MS } from '../../apps/api/src/runtime/time-slice.js';
import { createMemoryEngine, SEARCH_INDEX_SNAPSHOT } from '../../apps/api/src/search/memory-engine.js';
import { createPostgresEngine } from '../../apps/api/src/search/postgres.js';
import { ANONYMOUS_VIEWER } from '../../apps/api/src/services/auth/viewer.js';
import { createSuggestEngine } from '../../apps/api/src/suggest/engine.js';
import { SUGGESTION_SNAPSHOT } from '../../apps/api/src/suggest/snapshot.js';
import { benchDatabaseName, ensureDatabase, treeMemory } from '../lib/env.js';
import { pickSkills, skillPath } from '../lib/identities.js';
import { watchLoop } from '../lib/loop-waits.js';
import { type BenchRow, writeResult } from '../lib/report.js';
import { setInEvery, startApi } from '../lib/servers.js';
import { percentile, round } from '../lib/stats.js';
import { JUDGEMENTS } from '../relevance/judgements.js';
import { loadMessages, MESSAGES_PATH } from '../suggest/messages.js';

/** The longest of `waits` (sorted longest first), the next four, and those over 100 ms. */
function longWaits(waits: number[]): BenchRow {
  const over = waits.filter((ms) => ms > 100);
  return {
    'longest ms': Math.round(waits[0] ?? 0),
    'next four ms': waits
      .slice(1, 5)
      .map((ms) => Math.round(ms))
      .join(' '),
    'over 100 ms': over.length,
    'their sum s': round(over.reduce((a, b) => a + b, 0) / 1000, 1),
  };
}

function row(structure: string, variant: string, measured: { seconds: number; waits: number[] }): BenchRow {
  return { structure, variant, 'build s': round(measured.seconds, 1), ...longWaits(measured.waits) };
}

async function measure(db: Database, sliceMs: number, messages: string[]) {
  const memory = createMemoryEngine(db, createPostgresEngine(db), {
    maxBytes: 2 ** 32,
    buildSliceMs: sliceMs,
  });
  const search = await watchLoop(() => memory.build());
  const suggest = createSuggestEngine(db, memory, { maxBytes: 2 ** 32, buildSliceMs: sliceMs });
  const model = await watchLoop(() => suggest.build());
  const documents = suggest.status().documents;
  const suggestions = [];
  const searches = [];
  for (const message of messages) {
    suggestions.push(await suggest.suggest(message, ANONYMOUS_VIEWER, 5));
    const words = message.split(/\s+/).slice(0, 6).join(' ');
    searches.push(await memory.search(words, {}, ANONYMOUS_VIEWER, 10, undefined));
  }
  await suggest.close();
  await memory.close();
  return { search, model, documents, suggestions, searches };
}

/**
 * Which of the API's structures serve: the search index and the suggestion model (its /metrics), in every
 * one of `workers` hub processes (API_WORKERS).
 */
async function serving(baseUrl: string, workers: number): Promise<{ search: boolean; model: boolean }> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  return {
    search: setInEvery(text, 'atskills_search_index_ready', workers),
    model: setInEvery(text, 'atskills_suggest_model_ready', workers),
  };
}

/**
 * Starts the API of `root` and probes it, one HEAD at a time, until both structures serve; notes when each
 * began to serve (read every half second) and the API's peak resident memory.
 */
async function probeWhileBuilding(
  url: string,
  root: string | undefined,
  paths: string[],
  untilStored?: Database,
  workers = 1,
) {
  const api = await startApi(url, { READ_CACHE_MB: '0', API_WORKERS: String(workers) }, root);
  const started = performance.now();
  const latencies: number[] = [];
  let failed = 0;
  let searchServes: number | undefined;
  let modelServes: number | undefined;
  let checked = performance.now();
  let peakMiB = 0;
  try {
    for (let i = 0; searchServes === undefined || modelServes === undefined; i++) {
      const sent = performance.now();
      const answer = await fetch(`${api.url}${paths[i % paths.length]}`, { method: 'HEAD' });
      latencies.push(performance.now() - sent);
      if (answer.status !== 200) failed++;
      if (performance.now() - checked > 500) {
        const now = await serving(api.url, workers);
        const seconds = (performance.now() - started) / 1000;
        if (now.search) searchServes ??= seconds;
        if (now.model) modelServes ??= seconds;
        checked = performance.now();
      }
    }
    // Each structure is stored once it serves: a restart must find both there.
    const stored = async (db: Database) =>
      (await modelSnapshotHeader(db, SEARCH_INDEX_SNAPSHOT)) &&
      (await modelSnapshotHeader(db, SUGGESTION_SNAPSHOT));
    while (untilStored && !(await stored(untilStored))) {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    // With API_WORKERS, the sum of each process's own peak.
    peakMiB = treeMemory(api.pid).peakMiB;
  } finally {
    await api.stop();
  }
  return {
    seconds: (performance.now() - started) / 1000,
    searchServes: searchServes ?? 0,
    modelServes: modelServes ?? 0,
    peakMiB,
    latencies,
    failed,
  };
}

function httpRow(label: string, probed: Awaited<ReturnType<typeof probeWhileBuilding>>): BenchRow {
  return {
    api: label,
    'search serves s': round(probed.searchServes, 1),
    'suggestions serve s': round(probed.modelServes, 1),
    'until both serve s': round(probed.seconds, 1),
    'peak RSS MiB': probed.peakMiB,
    probes: probed.latencies.length,
    'not 200': probed.failed,
    'p50 ms': round(percentile(probed.latencies, 50), 2),
    'p99 ms': round(percentile(probed.latencies, 99), 1),
    ...longWaits([...probed.latencies].sort((a, b) => b - a)),
  };
}

async function runHttp(
  url: string,
  against: string | undefined,
  restart: boolean,
  workers: number,
): Promise<void> {
  const paths = (await pickSkills(url, 256)).map((skill) => skillPath(skill.identity));
  const rows: BenchRow[] = [];
  if (restart) {
    const handle = connectPostgres({ url, max: 2 });
    try {
      await deleteModelSnapshot(handle.db, SEARCH_INDEX_SNAPSHOT);
      await deleteModelSnapshot(handle.db, SUGGESTION_SNAPSHOT);
      const first = await probeWhileBuilding(url, undefined, paths, handle.db, workers);
      const label = workers > 1 ? `, API_WORKERS=${workers}` : '';
      rows.push(httpRow(`first start (builds both, stores them)${label}`, first));
      const again = await probeWhileBuilding(url, undefined, paths, undefined, workers);
      rows.push(httpRow(`restart (restores both)${label}`, again));
      const mib = async (name: string) =>
        round(((await modelSnapshotHeader(handle.db, name))?.bytes ?? 0) / 2 ** 20, 1);
      writeResult(workers > 1 ? `builds-restart-workers${workers}` : 'builds-restart', rows, {
        probe: 'HEAD /v1/skills/<identity>, one at a time, READ_CACHE_MB=0',
        apiWorkers: workers,
        searchIndexSnapshotMiB: await mib(SEARCH_INDEX_SNAPSHOT),
        suggestionModelSnapshotMiB: await mib(SUGGESTION_SNAPSHOT),
        searchServesRatio: round(first.searchServes / again.searchServes, 2),
        suggestionsServeRatio: round(first.modelServes / again.modelServes, 2),
      });
    } finally {
      await handle.close();
    }
    return;
  }
  if (against) {
    const probed = await probeWhileBuilding(url, against, paths);
    rows.push(httpRow(`[against] ${against}`, probed));
  }
  const probed = await probeWhileBuilding(url, undefined, paths);
  rows.push(httpRow('this checkout', probed));
  writeResult('builds-http', rows, { probe: 'HEAD /v1/skills/<identity>, one at a time, READ_CACHE_MB=0' });
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      database: { type: 'string' },
      http: { type: 'boolean', default: false },
      against: { type: 'string' },
      restart: { type: 'boolean', default: false },
      snapshot: { type: 'boolean', default: false },
      /** With --http --restart: hub processes (API_WORKERS); a structure serves once it serves in all. */
      workers: { type: 'string', default: '1' },
    },
  });
  const url = await ensureDatabase(values.database ?? benchDatabaseName, false);
  if (values.http) {
    const workers = Number(values.workers);
    if (!Number.isInteger(workers) || workers < 1)
      throw new Error(`--workers: expected a count of hub processes, got "${values.workers}"`);
    await runHttp(url, values.against, values.restart, workers);
    return;
  }
  const handle = connectPostgres({ url, max: 4 });
  const messages = loadMessages(MESSAGES_PATH).map((j) => j.message);
  if (values.snapshot) {
    try {
      await measureSnapshot(handle.db, messages);
    } finally {
      await handle.close();
    }
    return;
  }
  try {
    const unsliced = await measure(handle.db, Number.POSITIVE_INFINITY, messages);
    globalThis.gc?.();
    const sliced = await measure(handle.db, SLICE_MS, messages);
    const sameSuggestions = isDeepStrictEqual(unsliced.suggestions, sliced.suggestions);
    const sameSearches = isDeepStrictEqual(unsliced.searches, sliced.searches);
    const rows = [
      row('search index', 'unsliced (baseline)', unsliced.search),
      row('search index', `slices of ${SLICE_MS} ms`, sliced.search),
      row('suggestion model', 'unsliced (baseline)', unsliced.model),
      row('suggestion model', `slices of ${SLICE_MS} ms`, sliced.model),
    ];
    const ratio = (a: { waits: number[] }, b: { waits: number[] }) =>
      round((a.waits[0] ?? 0) / (b.waits[0] ?? 1), 1);
    writeResult('builds', rows, {
      skills: sliced.documents,
      messages: messages.length,
      longestWaitRatio: {
        searchIndex: ratio(unsliced.search, sliced.search),
        suggestionModel: ratio(unsliced.model, sliced.model),
      },
      buildTimeRatio: {
        searchIndex: round(sliced.search.seconds / unsliced.search.seconds, 2),
        suggestionModel: round(sliced.model.seconds / unsliced.model.seconds, 2),
      },
      sameSuggestions,
      sameSearches,
    });
    console.log(
      `\nlongest wait, unsliced / sliced: search index ${ratio(unsliced.search, sliced.search)}x, suggestion model ${ratio(unsliced.model, sliced.model)}x; answers identical: suggestions ${sameSuggestions}, searches ${sameSearches} (${messages.length} messages)`,
    );
    if (!sameSuggestions || !sameSearches) process.exitCode = 1;
  } finally {
    await handle.close();
  }
}

/** The snapshot events a build and a restore report. */
type Stored = Extract<SnapshotEvent, { kind: 'stored' }>;
type Restored = Extract<SnapshotEvent, { kind: 'restored' }>;

/**
 * Makes an engine and builds it (a build or a restore), returning the engine, the loop's waits and the
 * snapshot event of `kind` it reported (throws when it reported none).
 */
async function buildWith<E extends { build(): Promise<void> }, K extends 'stored' | 'restored'>(
  kind: K,
  make: (onSnapshot: (event: SnapshotEvent) => void) => E,
) {
  const events: SnapshotEvent[] = [];
  const engine = make((event) => events.push(event));
  const measured = await watchLoop(() => engine.build());
  const event = events.find((e) => e.kind === kind);
  if (!event) throw new Error(`no snapshot was ${kind}: ${JSON.stringify(events)}`);
  return { engine, measured, event: event as K extends 'stored' ? Stored : Restored };
}

/**
 * Both structures built and stored, then restored by second engines (see `--snapshot`); every judged
 * query's and message's answers compared.
 */
async function measureSnapshot(db: Database, messages: string[]): Promise<void> {
  await deleteModelSnapshot(db, SEARCH_INDEX_SNAPSHOT);
  await deleteModelSnapshot(db, SUGGESTION_SNAPSHOT);
  const memory = (onSnapshot: (event: SnapshotEvent) => void) =>
    createMemoryEngine(db, createPostgresEngine(db), { maxBytes: 2 ** 32, snapshots: true, onSnapshot });
  const queries = [
    ...JUDGEMENTS.map((j) => j.q),
    ...messages.map((m) => m.split(/\s+/).slice(0, 6).join(' ')),
  ];
  const searches = async (e: ReturnType<typeof memory>) => {
    const out = [];
    for (const q of queries) out.push(await e.search(q, {}, ANONYMOUS_VIEWER, 10, undefined));
    return out;
  };
  const indexBuild = await buildWith('stored', memory);
  const builtSearches = await searches(indexBuild.engine);
  await indexBuild.engine.close();
  globalThis.gc?.();
  const indexRestore = await buildWith('restored', memory);
  const index = indexRestore.engine;
  const sameSearches = isDeepStrictEqual(await searches(index), builtSearches);

  const engine = (onSnapshot: (event: SnapshotEvent) => void) =>
    createSuggestEngine(db, index, { maxBytes: 2 ** 32, snapshots: true, explain: true, onSnapshot });
  const answers = async (e: ReturnType<typeof engine>) => {
    const out = [];
    for (const message of messages) out.push(await e.suggest(message, ANONYMOUS_VIEWER, 5));
    return out;
  };
  const modelBuild = await buildWith('stored', engine);
  const builtAnswers = await answers(modelBuild.engine);
  const documents = modelBuild.engine.status().documents;
  await modelBuild.engine.close();
  globalThis.gc?.();
  const modelRestore = await buildWith('restored', engine);
  const restoring = modelRestore.engine;
  const sameSuggestions = isDeepStrictEqual(await answers(restoring), builtAnswers);
  await restoring.close();
  await index.close();

  const figures = (
    built: { measured: { seconds: number }; event: Stored },
    restored: { measured: { seconds: number } },
  ) => {
    const buildSeconds = built.measured.seconds - built.event.seconds;
    return {
      buildSeconds: round(buildSeconds, 1),
      storeSeconds: round(built.event.seconds, 1),
      restoreSeconds: round(restored.measured.seconds, 1),
      snapshotMiB: round(built.event.bytes / 2 ** 20, 1),
      buildToRestoreRatio: round(buildSeconds / restored.measured.seconds, 1),
    };
  };
  const search = figures(indexBuild, indexRestore);
  const model = figures(modelBuild, modelRestore);
  writeResult(
    'builds-snapshot',
    [
      row('search index', 'built, then stored (as shipped)', indexBuild.measured),
      row('search index', 'restored from the stored snapshot', indexRestore.measured),
      row('suggestion model', 'built, then stored (as shipped)', modelBuild.measured),
      row('suggestion model', 'restored from the stored snapshot', modelRestore.measured),
    ],
    {
      skills: documents,
      queries: queries.length,
      messages: messages.length,
      searchIndex: search,
      suggestionModel: model,
      sameSearches,
      sameSuggestions,
    },
  );
  for (const [name, f] of [
    ['search index', search],
    ['suggestion model', model],
  ] as const) {
    console.log(
      `${name}: restored in ${f.restoreSeconds} s against a build of ${f.buildSeconds} s (${f.buildToRestoreRatio}x); snapshot ${f.snapshotMiB} MiB stored in ${f.storeSeconds} s`,
    );
  }
  console.log(
    `answers identical: searches ${sameSearches} (${queries.length} queries), suggestions ${sameSuggestions} (${messages.length} messages)`,
  );
  if (!sameSearches || !sameSuggestions) process.exitCode = 1;
}
