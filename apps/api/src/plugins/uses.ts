import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Redis } from 'ioredis';
import { canonicalIdentity } from '../services/locate.js';
import { clientDigest, clientKey, UsesCounter } from '../services/uses.js';

/** How often buffered uses are written (also on close). */
const FLUSH_EVERY_MS = 5_000;
/** Client digests remembered between flushes at most. */
const MAX_REMEMBERED_CLIENTS = 4_096;

declare module 'fastify' {
  interface FastifyInstance {
    uses: UsesCounter;
    /** Counts one resolution of a skill by this request's client (identity as requested; canonicalised here). */
    noteUse: (request: FastifyRequest, identity: string) => void;
  }
}

/** Where uses are counted: Redis HyperLogLogs (keys under `keyPrefix`), else the database. */
export interface UsesOptions {
  redis?: Redis | undefined;
  keyPrefix?: string;
  capPerClient?: number;
}

/** The uses counter of the app (services/uses.ts); routes call `app.noteUse` after resolving a skill. */
export default fp<UsesOptions>(
  async (app, options) => {
    const counter = new UsesCounter(
      app.db,
      app.clock,
      options.redis,
      app.log,
      options.capPerClient,
      options.keyPrefix,
    );
    app.decorate('uses', counter);
    if (app.hasDecorator('searchUsesWritten')) counter.onWritten = () => app.searchUsesWritten();
    // A client's digest is kept until the next flush, like the digests buffered with its uses: clients
    // probe many skills in a row (and a batch notes up to 128 at once), and a SHA-256 per probe was a
    // few percent of its CPU.
    const digests = new Map<string, string>();
    app.decorate('noteUse', (request: FastifyRequest, identity: string) => {
      const canonical = canonicalIdentity(identity);
      if (!canonical) return;
      // An account only once the viewer plugin verified its token; a made-up one counts as its address.
      const client = { ip: request.ip, account: request.viewer?.userId ?? null };
      const key = clientKey(client);
      let digest = digests.get(key);
      if (digest === undefined) {
        digest = clientDigest(client);
        if (digests.size >= MAX_REMEMBERED_CLIENTS) digests.clear();
        digests.set(key, digest);
      }
      counter.note(canonical, digest);
    });
    const timer = setInterval(() => {
      digests.clear();
      void counter.flush();
    }, FLUSH_EVERY_MS);
    timer.unref();
    app.addHook('onClose', async () => {
      clearInterval(timer);
      await counter.flush();
    });
  },
  { name: 'uses', dependencies: ['atskills-database'] },
);
