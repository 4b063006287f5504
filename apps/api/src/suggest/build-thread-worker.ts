/**
 * The suggestion model's build thread (build-thread.ts starts it): builds the model from the database,
 * stores it as SUGGESTION_SNAPSHOT and answers with the build's seconds, then closes its connections.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { connectPostgres, modelSnapshotHeader } from '@atskills/db';
import { createPostgresEngine } from '../search/postgres.js';
import type { BuildThreadAnswer, BuildThreadData } from './build-thread.js';
import { createSuggestEngine } from './engine.js';
import { SUGGESTION_SNAPSHOT } from './snapshot.js';

const data = workerData as BuildThreadData;
const handle = connectPostgres({ url: data.url, max: 2, applicationName: 'atskills-suggest-build' });
let answer: BuildThreadAnswer;
try {
  const errors: string[] = [];
  // The lexical engine is only asked by suggestions, which this thread never answers.
  const engine = createSuggestEngine(handle.db, createPostgresEngine(handle.db), {
    maxBytes: data.maxBytes,
    keepEmbeddingTexts: data.embeddingTexts,
    snapshots: true,
    // This thread's event loop answers nothing: the build never pauses.
    buildSliceMs: Number.POSITIVE_INFINITY,
    onError: (err) => errors.push((err as Error).message),
  });
  await engine.build();
  const status = engine.status();
  await engine.close();
  if (!status.ready) throw new Error(status.error ?? errors[0] ?? 'no model was built');
  if (!(await modelSnapshotHeader(handle.db, SUGGESTION_SNAPSHOT))) {
    throw new Error(`the model was built but not stored${errors[0] ? `: ${errors[0]}` : ''}`);
  }
  answer = { result: status.buildSeconds };
} catch (err) {
  answer = { error: (err as Error).message };
} finally {
  await handle.close();
}
parentPort?.postMessage(answer);
