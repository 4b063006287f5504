import type { FastifyInstance } from 'fastify';

/** Prometheus exposition of the app's registry (text format 0.0.4). */
export default async function metricsRoutes(app: FastifyInstance) {
  app.get(
    '/metrics',
    {
      config: { rateLimit: false },
      logLevel: 'warn',
      schema: { operationId: 'getMetrics', tags: ['ops'], summary: 'Prometheus metrics', hide: true },
    },
    async (_request, reply) => {
      const body = await app.metrics.registry.metrics();
      return reply
        .header('content-type', app.metrics.registry.contentType)
        .header('cache-control', 'no-store')
        .send(body);
    },
  );
}
