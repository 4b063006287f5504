import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { Queue } from 'bullmq';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { problem } from '../problems.js';
import { sendProblem } from './errors.js';

/** Where the dashboard is mounted. */
export const QUEUE_BOARD_PATH = '/admin/queues';

/** True for a viewer allowed to operate the queues: an admin user or a token with the `admin` scope. */
export function isOperator(request: FastifyRequest): boolean {
  const viewer = request.viewer;
  return Boolean(viewer && (viewer.isAdmin || viewer.scopes.includes('admin')));
}

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
        'The queue dashboard needs a token with the admin scope',
        {},
        {
          'www-authenticate': 'Bearer',
        },
      );
      return sendProblem(request, reply, p);
    }
    return sendProblem(request, reply, problem('forbidden', 'The queue dashboard needs the admin scope'));
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
