import { answerFromThread, type ThreadAnswer } from '../runtime/worker-thread.js';

/** What the build thread is given: the database to build from and store to, and the model's memory budget. */
export interface BuildThreadData {
  /** A Postgres server's connection URL (the thread opens its own connections). */
  url: string;
  maxBytes: number;
  /** Whether the hub has an embeddings service: the model it stores then keeps what the service embeds. */
  embeddingTexts: boolean;
}

/** What the build thread answers: the build's seconds (null when a stored model was loaded instead), or why it failed. */
export type BuildThreadAnswer = ThreadAnswer<number | null>;

/**
 * Builds the suggestion model in a worker thread over the database at `data.url` and stores it there
 * (SUGGESTION_SNAPSHOT), for the engine of this thread to load: the build's CPU goes to another core and
 * holds none of this event loop. Resolves with the build's seconds (null when the thread found a stored
 * model it could load, and built nothing); `signal` stops the thread.
 */
export function buildModelInThread(data: BuildThreadData, signal: AbortSignal): Promise<number | null> {
  return answerFromThread<number | null>(
    import.meta.url,
    './build-thread-worker',
    data,
    'the suggestion model build thread',
    signal,
  );
}
