import type { FastifyInstance } from 'fastify';
import { createTestDatabase, type TestDatabase } from '../../../../test/support/database.js';
import { type AppDeps, buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';

/** A hub app on a fresh database of its own (one per test file). */
export interface TestHub {
  app: FastifyInstance;
  db: TestDatabase;
  close(): Promise<void>;
}

/**
 * Builds the real app against a new migrated database; `close` closes the app and drops the database.
 * `seed` writes to the database before the app is built (what the app should find at its start).
 */
export async function createTestHub(
  label: string,
  env: Record<string, string> = {},
  deps: Omit<AppDeps, 'database'> = {},
  seed?: (db: TestDatabase) => Promise<void>,
): Promise<TestHub> {
  const db = await createTestDatabase(label);
  await seed?.(db);
  // The read cache is off unless a test asks for it: tests write through their own connection and read at
  // once, which would race the NOTIFY that drops the cache (test/read-cache.test.ts covers the cache).
  // The same goes for the in-memory search index (test/search-memory.test.ts covers it): Postgres answers.
  // Failed authentications are not limited either: the access matrices send revoked and expired tokens by the
  // dozen from one address (test/security-findings.test.ts covers the limit).
  const app = await buildApp(
    loadConfig({
      LOG_LEVEL: 'silent',
      READ_CACHE_MB: '0',
      SEARCH_ENGINE: 'postgres',
      AUTH_FAILURES_MAX: '0',
      ...env,
    }),
    {
      ...deps,
      database: db,
    },
  );
  return {
    app,
    db,
    async close() {
      await app.close();
      await db.drop();
    },
  };
}
