import fastifyRateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Redis } from 'ioredis';
import { problem } from '../problems.js';
import { rateLimitKey } from '../services/caller-key.js';
import { MemoryWindows, type WindowCount, type WindowCounter } from '../services/rate-windows.js';

export { rateLimitKey };

export interface RateLimitSettings {
  /** Requests per window per caller; 0 turns rate limiting off. */
  max: number;
  /** The window, in milliseconds or as text (`1 minute`, `30s`). */
  timeWindow: number | string;
  /** Shared counters across API replicas; without it each instance counts on its own. */
  redis?: Redis;
  /**
   * Without Redis, counters shared by the processes of one hub (the cluster primary's, `API_WORKERS`);
   * without either, this process counts alone.
   */
  shared?: WindowCounter;
}

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Charges `units` more against the caller's rate limit (a request already counts one when it arrives):
     * batches pay per item (SPEC 2.8). Throws the `rate-limited` problem, with Retry-After, once the caller
     * is over the limit. A no-op while rate limiting is off.
     */
    chargeRateLimit(request: FastifyRequest, reply: FastifyReply, units: number): Promise<void>;
  }
}

const NAMESPACE = 'atskills:ratelimit:';

type StoreCallback = (error: Error | null, result?: WindowCount) => void;

// INCRBY with the window set on the first unit: the plugin's own script only increments by one, and a batch
// must be charged per item against the same counter.
const INCR_BY = `
local current = redis.call('INCRBY', KEYS[1], ARGV[2])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {current, ttl}
`;

/** Fixed windows in Redis, shared by every replica of the hub. */
export class RedisWindows implements WindowCounter {
  constructor(private readonly redis: Redis) {
    if (!('atskillsIncrBy' in redis))
      redis.defineCommand('atskillsIncrBy', { numberOfKeys: 1, lua: INCR_BY });
  }

  async add(key: string, units: number, timeWindow: number): Promise<WindowCount> {
    const run = (this.redis as unknown as Record<string, (...args: unknown[]) => Promise<[number, number]>>)
      .atskillsIncrBy;
    const [current, ttl] = await run!.call(this.redis, key, timeWindow, units);
    return { current, ttl };
  }

  async read(key: string): Promise<WindowCount> {
    const replies = await this.redis.multi().get(key).pttl(key).exec();
    const current = Number(replies?.[0]?.[1] ?? 0);
    const ttl = Number(replies?.[1]?.[1] ?? 0);
    return { current, ttl: Math.max(ttl, 0) };
  }
}

/**
 * The rate-limit store, written here instead of the plugin's (which can only add one per request) so that
 * a route can charge a batch per item against the very counter the plugin reads: fixed windows per caller,
 * kept by `counter` (Redis, the cluster primary, or this process), each key under this store's prefix.
 */
export class CountingStore {
  constructor(
    private readonly counter: WindowCounter,
    private readonly prefix = NAMESPACE,
  ) {}

  /** Adds `units` to `key`'s count in the current window (opened now when there is none). */
  add(key: string, units: number, timeWindow: number): Promise<WindowCount> {
    return this.counter.add(this.prefix + key, units, timeWindow);
  }

  incr(key: string, callback: StoreCallback, timeWindow: number): void {
    this.add(key, 1, timeWindow).then(
      (count) => callback(null, count),
      (error: Error) => callback(error),
    );
  }

  read(key: string, callback: StoreCallback, timeWindow: number): void {
    this.counter.read(this.prefix + key, timeWindow).then(
      (count) => callback(null, count),
      (error: Error) => callback(error),
    );
  }

  /** Routes with their own limits count apart (the plugin asks for this; no route sets one today). */
  child(routeOptions: { routeInfo: { method?: string; url?: string } }): CountingStore {
    const { method = '', url = '' } = routeOptions.routeInfo;
    return new CountingStore(this.counter, `${this.prefix}${method}${url}-`);
  }
}

function rateLimited(max: number, ttl: number) {
  const seconds = Math.max(1, Math.ceil(ttl / 1000));
  return problem(
    'rate-limited',
    `Rate limit of ${max} requests exceeded; retry in ${seconds} second${seconds === 1 ? '' : 's'}`,
    { limit: max, retryAfterSeconds: seconds },
  );
}

/** Per-token-or-IP rate limit answering 429 problems with Retry-After and RateLimit-* headers. */
export default fp(
  async function rateLimitPlugin(app: FastifyInstance, settings: RateLimitSettings) {
    if (settings.max <= 0) {
      app.decorate('chargeRateLimit', async () => {});
      return;
    }
    // Counters get their own connection that fails at once while Redis is away (no offline queue, a short
    // command timeout for a silent server), so skipOnError lets requests through immediately instead of each
    // one waiting out the shared client's reconnect retries (seconds per request, measured in
    // test/reliability/redis-outage.test.ts).
    const counters = settings.redis?.duplicate({
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: 500,
    });
    if (counters) {
      counters.on('error', () => {}); // the shared client already logs outages
      app.addHook('onClose', async () => {
        counters.disconnect();
      });
      // Commands sent before it is connected would fail (no offline queue): wait for it, but never block
      // start-up on a Redis that is down (requests then go uncounted until it is back).
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 2_000);
        counters.once('ready', () => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    const store = new CountingStore(
      counters ? new RedisWindows(counters) : (settings.shared ?? new MemoryWindows()),
    );
    let windowMs = 60_000;
    await app.register(fastifyRateLimit, {
      max: settings.max,
      timeWindow: settings.timeWindow,
      keyGenerator: rateLimitKey,
      // IETF draft headers: RateLimit-Limit / -Remaining / -Reset and Retry-After on 429.
      enableDraftSpec: true,
      // The plugin builds its store from this constructor with the parsed settings; it gets ours.
      store: function Store(this: unknown, params: { timeWindow: number }) {
        windowMs = params.timeWindow;
        return store;
      } as unknown as NonNullable<Parameters<typeof fastifyRateLimit>[1]>['store'],
      // A Redis outage must not take the read API down with it: count nothing rather than refuse everything.
      skipOnError: true,
      errorResponseBuilder: (_request, context) => rateLimited(context.max, context.ttl),
    });

    app.decorate('chargeRateLimit', async (request: FastifyRequest, reply: FastifyReply, units: number) => {
      if (units <= 0) return;
      let count: WindowCount;
      try {
        count = await store.add(rateLimitKey(request), units, windowMs);
      } catch {
        return; // as skipOnError: an unreachable Redis counts nothing
      }
      const remaining = Math.max(0, settings.max - count.current);
      const reset = Math.max(1, Math.ceil(count.ttl / 1000));
      reply
        .header('ratelimit-limit', settings.max)
        .header('ratelimit-remaining', remaining)
        .header('ratelimit-reset', reset);
      if (count.current > settings.max) {
        reply.header('retry-after', reset);
        throw rateLimited(settings.max, count.ttl);
      }
    });
  },
  { name: 'atskills-rate-limit' },
);
