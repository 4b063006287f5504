import fastifyRateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Redis } from 'ioredis';
import { problem } from '../problems.js';
import { rateLimitKey } from '../services/caller-key.js';

export { rateLimitKey };

export interface RateLimitSettings {
  /** Requests per window per caller; 0 turns rate limiting off. */
  max: number;
  /** The window, in milliseconds or as text (`1 minute`, `30s`). */
  timeWindow: number | string;
  /** Shared counters across API replicas; without it each instance counts on its own. */
  redis?: Redis;
}

/** Per-token-or-IP rate limit answering 429 problems with Retry-After and RateLimit-* headers. */
export default fp(
  async function rateLimitPlugin(app: FastifyInstance, settings: RateLimitSettings) {
    if (settings.max <= 0) return;
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
    await app.register(fastifyRateLimit, {
      max: settings.max,
      timeWindow: settings.timeWindow,
      keyGenerator: rateLimitKey,
      // IETF draft headers: RateLimit-Limit / -Remaining / -Reset and Retry-After on 429.
      enableDraftSpec: true,
      nameSpace: 'atskills:ratelimit:',
      ...(counters ? { redis: counters } : {}),
      // A Redis outage must not take the read API down with it: count nothing rather than refuse everything.
      skipOnError: true,
      errorResponseBuilder: (_request, context) =>
        problem('rate-limited', `Rate limit of ${context.max} requests exceeded; retry in ${context.after}`, {
          limit: context.max,
          retryAfterSeconds: Math.ceil(context.ttl / 1000),
        }),
    });
  },
  { name: 'atskills-rate-limit' },
);
