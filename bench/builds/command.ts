/**
 * `npm run bench -- builds [--database D]`: how long the hub's in-memory builds hold the event loop, over the
 * benchmark index (`load` first). While the search index and the suggestion model build (at every start,
 * and the model's re-mining after a tenth of the index changed), the same event loop answers every request:
 * a probe, a resolve, a search answered by Postgres meanwhile. Each build runs twice in this one process:
 * unsliced (a build that never lets the event loop run between its rows: the baseline) and as shipped
 * (slices of SLICE_MS). A timer every 5 ms records how long each turn of the loop waited: the longest
 * waits, and how many exceeded 100 ms. Both builds must answer alike: every judged message's suggestions
 * and the search index's answers to their words are compared (exit 1 when one differs).
 */
import { isDeepStrictEqual, parseArgs } from 'node:util';
import { connectPostgres, type Database } from '@atskills/db';
import { SLICE_MS } from '../../apps/api/src/runtime/time-slice.js';
import { createMemoryEngine } from '../../apps/api/src/search/memory-engine.js';
import { createPostgresEngine } from '../../apps/api/src/search/postgres.js';
import { createSuggestEngine } from '../../apps/api/src/suggest/engine.js';
import { benchDatabaseName, ensureDatabase } from '../lib/env.js';
import { type BenchRow, writeResult } from '../lib/report.js';
import { round } from '../lib/stats.js';
import { loadMessages, MESSAGES_PATH } from '../suggest/messages.js';

const PROBE_MS = 5;
const ANONYMOUS = { isAdmin: false, readableNamespaces: [] };

/** Runs `work` while a timer records every wait of the event loop (ms between its turns). */
async function watchLoop<T>(
  work: () => Promise<T>,
): Promise<{ result: T; seconds: number; waits: number[] }> {
  const waits: number[] = [];
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    waits.push(now - last);
    last = now;
  }, PROBE_MS);
  const started = performance.now();
  const result = await work();
  const seconds = (performance.now() - started) / 1000;
  clearInterval(timer);
  return { result, seconds, waits: waits.sort((a, b) => b - a) };
}

function row(structure: string, variant: string, measured: { seconds: number; waits: number[] }): BenchRow {
  const over = measured.waits.filter((w) => w > 100);
  return {
    structure,
    variant,
    'build s': round(measured.seconds, 1),
    'longest wait ms': Math.round(measured.waits[0] ?? 0),
    'waits ms (2nd-5th)': measured.waits
      .slice(1, 5)
      .map((w) => Math.round(w))
      .join(' '),
    'waits > 100 ms': over.length,
    'their sum s': round(over.reduce((a, b) => a + b, 0) / 1000, 1),
  };
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
    suggestions.push(await suggest.suggest(message, ANONYMOUS, 5));
    const words = message.split(/\s+/).slice(0, 6).join(' ');
    searches.push(await memory.search(words, {}, ANONYMOUS, 10, undefined));
  }
  await suggest.close();
  await memory.close();
  return { search, model, documents, suggestions, searches };
}

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { database: { type: 'string' } } });
  const url = await ensureDatabase(values.database ?? benchDatabaseName, false);
  const handle = connectPostgres({ url, max: 4 });
  const messages = loadMessages(MESSAGES_PATH).map((j) => j.message);
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
