/**
 * Redis for tests: REDIS_URL, else a local Redis on 127.0.0.1:6379, else a testcontainers Redis for
 * contributors who have Docker. Each test file takes a unique BullMQ key prefix, so files run in parallel
 * against one Redis without seeing each other's queues.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

let urlPromise: Promise<string> | undefined;

async function canConnect(url: string): Promise<boolean> {
  const client = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 1_000,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
    return true;
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/** The Redis URL tests use. */
export function redisUrl(): Promise<string> {
  urlPromise ??= (async () => {
    if (process.env.REDIS_URL) return process.env.REDIS_URL;
    const local = 'redis://127.0.0.1:6379';
    if (await canConnect(local)) return local;
    const { RedisContainer } = await import('@testcontainers/redis');
    const container = await new RedisContainer('redis:7-alpine')
      .withCommand(['redis-server', '--maxmemory-policy', 'noeviction'])
      .start();
    return container.getConnectionUrl();
  })();
  return urlPromise;
}

/** A BullMQ key prefix unique to this test file (and process). */
export function uniqueQueuePrefix(label: string): string {
  return `atskills-test-${label.replace(/[^a-z0-9]/gi, '-')}-${randomBytes(4).toString('hex')}`;
}

/** Deletes every key under a prefix (afterAll). */
export async function dropQueuePrefix(url: string, prefix: string): Promise<void> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await client.del(...keys);
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
}
