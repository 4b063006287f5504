import { connectDatabase, type Database, type DatabaseHandle, databaseOptions } from '@atskills/db';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Gauge } from 'prom-client';
import type { AppConfig } from '../config.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The drizzle database (pass it, or a transaction, to repository functions). */
    db: Database;
    /** The handle behind `db`: mode, location, ping. */
    database: DatabaseHandle;
  }
}

export interface DatabasePluginOptions {
  config: AppConfig;
  /** A handle owned by the caller (tests); when absent the plugin connects and closes its own. */
  handle?: DatabaseHandle;
}

/**
 * The connection pool on /metrics (a server Postgres only): connections busy and idle, and requests waiting
 * for one. A connection that stays busy while no request runs is a leaked one; requests waiting while none
 * is idle mean the pool (10 connections a process) or the database is the bottleneck.
 */
function reportPool(app: FastifyInstance, handle: DatabaseHandle) {
  const counts = handle.poolCounts?.bind(handle);
  if (!counts) return;
  const registers = [app.metrics.registry];
  new Gauge({
    name: 'atskills_db_pool_connections',
    help: 'Database pool connections by state (busy: checked out, idle: open and free)',
    labelNames: ['state'] as const,
    registers,
    collect() {
      const { total, idle } = counts();
      this.set({ state: 'busy' }, total - idle);
      this.set({ state: 'idle' }, idle);
    },
  });
  new Gauge({
    name: 'atskills_db_pool_waiting',
    help: 'Callers waiting for a database pool connection',
    registers,
    collect() {
      this.set(counts().waiting);
    },
  });
}

/** Connects the database (DATABASE_URL, else embedded under ATSKILLS_DATA_DIR) and closes it on shutdown. */
export default fp(
  async function databasePlugin(app: FastifyInstance, opts: DatabasePluginOptions) {
    const owned = !opts.handle;
    const handle =
      opts.handle ??
      (await connectDatabase(
        databaseOptions('api', { url: opts.config.databaseUrl, dataDir: opts.config.dataDir }),
      ));
    app.decorate('database', handle);
    app.decorate('db', handle.db);
    app.log.info({ mode: handle.mode, location: handle.location }, 'database ready');
    reportPool(app, handle);
    if (owned) app.addHook('onClose', async () => handle.close());
  },
  { name: 'atskills-database' },
);
