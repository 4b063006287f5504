/**
 * The crawl queue (Redis) did not take a job in time: the hub answers 503 with Retry-After, and nothing that
 * waits on the job (an index request, a run) is left open. The queue's connection retries a command for
 * as long as Redis is away (BullMQ needs that for its workers), so an add has to be given up by time.
 */
export class QueueUnavailableError extends Error {
  override readonly name = 'QueueUnavailableError';
  /** Seconds to wait before asking again. */
  readonly retryAfterSeconds = 5;
}

/** How long a job's add may wait for Redis before it is given up (the request it serves is then a 503). */
export const ENQUEUE_DEADLINE_MS = 5_000;

/** `adding`, or a QueueUnavailableError once ENQUEUE_DEADLINE_MS passed or Redis refused it. */
export async function enqueued<T>(adding: Promise<T>, deadlineMs = ENQUEUE_DEADLINE_MS): Promise<T> {
  // An add given up may still settle later (Redis came back): its outcome is nobody's any more.
  adding.catch(() => {});
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new QueueUnavailableError(
            `The crawl queue (Redis) did not take the job within ${deadlineMs / 1000} s; try again shortly`,
          ),
        ),
      deadlineMs,
    );
  });
  try {
    return await Promise.race([adding, deadline]);
  } catch (error) {
    if (error instanceof QueueUnavailableError) throw error;
    throw new QueueUnavailableError(
      `The crawl queue (Redis) refused the job (${(error as Error).message}); try again shortly`,
      { cause: error },
    );
  } finally {
    clearTimeout(timer);
  }
}
