import type { FastifyInstance } from 'fastify';
import healthRoutes from './health.js';
import metricsRoutes from './metrics.js';

/** Operations endpoints: /healthz, /readyz, /metrics (crawl runs and status are under routes/v1/). */
export default async function opsRoutes(app: FastifyInstance, options: { metricsPublic?: boolean } = {}) {
  await app.register(healthRoutes);
  await app.register(metricsRoutes, { public: options.metricsPublic ?? true });
}
