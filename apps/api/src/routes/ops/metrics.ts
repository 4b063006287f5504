import type { FastifyInstance } from 'fastify';
import { problem } from '../../problems.js';
import { isHubAdmin } from '../../services/auth/permissions.js';

/**
 * Prometheus exposition of the app's registry (text format 0.0.4): to anyone with `METRICS_PUBLIC=true`,
 * else to hub administrators only (route patterns and queue depths describe the deployment).
 */
export default async function metricsRoutes(app: FastifyInstance, options: { public: boolean }) {
  app.get(
    '/metrics',
    {
      config: { rateLimit: false },
      logLevel: 'warn',
      schema: { operationId: 'getMetrics', tags: ['ops'], summary: 'Prometheus metrics', hide: true },
    },
    async (request, reply) => {
      if (!options.public && !(request.viewer && isHubAdmin(request.viewer))) {
        // The same 404 as any unknown route: the endpoint's existence is not advertised.
        throw problem('not-found', 'No route GET /metrics');
      }
      const body = await app.metrics.scrape();
      return reply
        .header('content-type', app.metrics.registry.contentType)
        .header('cache-control', 'no-store')
        .send(body);
    },
  );
}
