import { QUEUES } from '@atskills/queue';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { Queue } from 'bullmq';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { problem } from '../problems.js';
import { isHubAdmin } from '../services/auth/permissions.js';
import { sendProblem } from './errors.js';

/** Where the dashboard is mounted. */
export const QUEUE_BOARD_PATH = '/admin/queues';

/**
 * True for a viewer allowed to operate the queues: a hub administrator with an admin-scoped token, the same
 * rule as `POST /v1/crawls` (a team owner's admin-scoped token manages their team, never the hub's queues).
 */
export function isOperator(request: FastifyRequest): boolean {
  return Boolean(request.viewer && isHubAdmin(request.viewer));
}

/**
 * What a job added or edited through the dashboard must hold: its queue's schema from the registry (the
 * workers re-validate too). `owner` and `repo` end up in git and REST URLs.
 */
const DASHBOARD_JOB_SCHEMAS: Record<string, z.ZodType> = Object.fromEntries(
  Object.values(QUEUES).map((q) => [q.name, q.schema]),
);

// Dashboard routes that write job data: add a job, edit a job's data.
const JOB_DATA_ROUTE = /^\/api\/queues\/([^/]+)\/(?:add|[^/]+\/update-data)$/;

/**
 * The BullMQ dashboard (@bull-board) at /admin/queues, for operators only. Registered encapsulated (not
 * through fastify-plugin) so its guard, view engine and error handler stay inside this prefix.
 */
export default async function queueBoardPlugin(app: FastifyInstance, options: { queues: Queue[] }) {
  // The guard runs before bull-board's routes and its static files: nothing of it is visible to others.
  // It answers directly: bull-board installs its own error handler, which would turn a thrown problem into a 500.
  app.addHook('onRequest', async (request, reply) => {
    if (isOperator(request)) return;
    if (!request.viewer || request.viewer.userId === null) {
      const p = problem(
        'unauthorized',
        'The queue dashboard needs a hub administrator token with the admin scope',
        {},
        {
          'www-authenticate': 'Bearer',
        },
      );
      return sendProblem(request, reply, p);
    }
    return sendProblem(
      request,
      reply,
      problem('forbidden', 'The queue dashboard is for hub administrators (admin-scoped token)'),
    );
  });
  // Job data written through the dashboard is checked against its queue's schema before bull-board sees it.
  app.addHook('preHandler', async (request, reply) => {
    const path = request.url.slice(QUEUE_BOARD_PATH.length).split('?')[0] ?? '';
    const match = JOB_DATA_ROUTE.exec(path);
    if (!match || request.method === 'GET') return;
    const queueName = decodeURIComponent(match[1] ?? '');
    const schema = DASHBOARD_JOB_SCHEMAS[queueName];
    const data = (request.body as { data?: unknown } | undefined)?.data;
    const checked = schema?.safeParse(data);
    if (checked?.success) return;
    return sendProblem(
      request,
      reply,
      problem(
        'bad-request',
        schema
          ? `Job data for ${queueName} is invalid: ${checked?.error.issues.map((i) => `${i.path.join('.') || 'data'}: ${i.message}`).join('; ')}`
          : `Jobs cannot be added to ${queueName} from the dashboard.`,
      ),
    );
  });
  const serverAdapter = new FastifyAdapter();
  serverAdapter.setBasePath(QUEUE_BOARD_PATH);
  createBullBoard({
    queues: options.queues.map((queue) => new BullMQAdapter(queue)),
    // @bull-board/fastify pins its own copy of @bull-board/api (one patch behind ours): same interface, separate
    // declarations, hence the cast.
    serverAdapter: serverAdapter as unknown as Parameters<typeof createBullBoard>[0]['serverAdapter'],
    options: { uiConfig: { boardTitle: '@skills hub queues' } },
  });
  await app.register(serverAdapter.registerPlugin());
}
