import { redactUrl } from '@atskills/db';
import { Redis } from 'ioredis';

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

/** Network errors of a connection that cannot be made (or was lost), as ioredis reports them. */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
]);

/** Whether `err` says Redis cannot be reached (not that a command failed). */
export function isConnectionError(err: unknown): err is Error & { code?: string } {
  const e = err as { code?: unknown; message?: unknown } | undefined;
  if (typeof e?.code === 'string' && CONNECTION_CODES.has(e.code)) return true;
  return typeof e?.message === 'string' && /Connection is closed|connect ETIMEDOUT/.test(e.message);
}

/**
 * Checks that Redis at `redisUrl` answers (one connect and PING within `timeoutMs`, no retries), so a
 * command that is about to queue work says at once, in one line naming REDIS_URL and the address, that it
 * cannot: the queue's own connections would retry for ever.
 */
export async function checkRedis(redisUrl: string, timeoutMs = 3_000): Promise<void> {
  const client = new Redis(redisUrl, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  // The socket's own error (refused, unknown host) names the address; connect() then only says "closed".
  let refused: Error | undefined;
  client.on('error', (error: Error) => {
    refused ??= error;
  });
  try {
    await client.connect();
    await client.ping();
  } catch (error) {
    const reason = (refused ?? (error as Error)).message;
    throw new QueueUnavailableError(
      `cannot reach Redis at REDIS_URL ${redactUrl(redisUrl)} (${reason}); check that it runs and REDIS_URL is right (without REDIS_URL, \`crawl\` works its jobs in this process)`,
    );
  } finally {
    client.disconnect();
  }
}
