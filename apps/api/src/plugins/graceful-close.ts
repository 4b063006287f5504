import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** How often, while the app closes, connections that have gone idle are closed. */
const SWEEP_MS = 100;

/**
 * Lets `app.close()` finish as soon as the requests in flight are answered. Fastify 5.12 on a plain http
 * server never runs its default `forceCloseConnections: 'idle'` (the branch needs a serverFactory:
 * fastify/fastify#7044, open), and Node's `server.close()` closes only the connections idle at that moment,
 * so a keep-alive connection that was serving a request when closing began stayed open for keepAliveTimeout
 * (72 s here) after its answer: a hub behind a load balancer shut down only at its deadline, and exited 1.
 * While closing, answers say `Connection: close`, and connections are closed as they go idle.
 */
export default fp(
  async function gracefulClosePlugin(app: FastifyInstance) {
    let closing = false;
    let sweep: NodeJS.Timeout | undefined;
    app.addHook('preClose', async () => {
      closing = true;
      // Also the answers whose headers went out before closing began: their connections idle after them.
      sweep = setInterval(() => app.server.closeIdleConnections(), SWEEP_MS);
      sweep.unref();
    });
    app.addHook('onSend', async (_request, reply) => {
      if (closing) reply.header('connection', 'close');
    });
    app.addHook('onClose', async () => clearInterval(sweep));
  },
  { name: 'atskills-graceful-close' },
);
