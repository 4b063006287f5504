import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { leanJsonRoute } from '../../plugins/security.js';

const CheckResult = z.looseObject({ status: z.enum(['up', 'down']), error: z.string().optional() });

/** Body of /readyz: overall state plus each dependency's. */
export const ReadinessResponse = z.object({
  status: z.enum(['ready', 'not-ready']),
  checks: z.record(z.string(), CheckResult),
});

/** Body of /healthz. */
export const LivenessResponse = z.object({ status: z.literal('up'), uptimeSeconds: z.number() });

/**
 * /healthz: the process answers (for restarts). /readyz: every dependency is usable (for load balancers);
 * 503 with the failing dependency named otherwise. Neither is rate limited nor logged per request.
 */
export default async function healthRoutes(app: FastifyInstance) {
  const routes = app.withTypeProvider<ZodTypeProvider>();
  routes.get(
    '/healthz',
    {
      ...leanJsonRoute,
      config: { rateLimit: false },
      logLevel: 'warn',
      schema: {
        operationId: 'getHealth',
        tags: ['ops'],
        summary: 'Liveness: the process is up',
        response: { 200: LivenessResponse },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'no-store');
      return { status: 'up' as const, uptimeSeconds: Math.round(process.uptime()) };
    },
  );
  routes.get(
    '/readyz',
    {
      ...leanJsonRoute,
      config: { rateLimit: false },
      logLevel: 'warn',
      schema: {
        operationId: 'getReadiness',
        tags: ['ops'],
        summary: 'Readiness: database, migrations, search engine and queue are usable',
        response: { 200: ReadinessResponse, 503: ReadinessResponse },
      },
    },
    async (_request, reply) => {
      const { ready, checks } = await app.readiness.run();
      reply.header('cache-control', 'no-store').code(ready ? 200 : 503);
      return { status: ready ? ('ready' as const) : ('not-ready' as const), checks };
    },
  );
}
