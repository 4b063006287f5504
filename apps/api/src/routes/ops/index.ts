import type { FastifyInstance } from 'fastify';
import healthRoutes from './health.js';
import metricsRoutes from './metrics.js';

/** Operations endpoints at the root: /healthz, /readyz, /metrics. */
export default async function opsRoutes(app: FastifyInstance) {
  await app.register(healthRoutes);
  await app.register(metricsRoutes);
}
