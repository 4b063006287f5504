import { connectDatabase, type Database, type DatabaseHandle, databaseOptions } from '@atskills/db';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
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
    if (owned) app.addHook('onClose', async () => handle.close());
  },
  { name: 'atskills-database' },
);
