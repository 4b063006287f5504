import type { FastifyInstance } from 'fastify';
import crawlRoutes from './crawls.js';
import healthRoutes from './health.js';
import metricsRoutes from './metrics.js';

/** Operations endpoints: /healthz, /readyz, /metrics, and crawl runs and status under /v1. */
export default async function opsRoutes(app: FastifyInstance, options: { metricsPublic?: boolean } = {}) {
  await app.register(healthRoutes);
  await app.register(metricsRoutes, { public: options.metricsPublic ?? true });
  await app.register(crawlRoutes);
}
