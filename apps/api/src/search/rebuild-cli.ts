/**
 * Rebuilds the Meilisearch index from Postgres, from zero: `npm run search:rebuild` (reads the same
 * environment as the hub: DATABASE_URL, MEILI_URL, MEILI_MASTER_KEY, MEILI_INDEX, and EMBEDDINGS_URL for the
 * documents' vectors).
 */
import { connectDatabase } from '@atskills/db';
import { ConfigError, loadConfig } from '../config.js';
import { createEmbeddingsClient } from '../suggest/embeddings.js';
import { createMeilisearchEngine } from './meilisearch.js';

try {
  const config = loadConfig(process.env);
  if (!config.meiliUrl) throw new ConfigError('MEILI_URL: not set; there is no Meilisearch index to rebuild');
  const database = await connectDatabase({ url: config.databaseUrl, embeddedDir: `${config.dataDir}/db` });
  try {
    const engine = createMeilisearchEngine(database.db, {
      url: config.meiliUrl,
      ...(config.meiliMasterKey ? { apiKey: config.meiliMasterKey } : {}),
      index: config.meiliIndex,
      timeoutMs: 60_000,
      ...(config.embeddings ? { embeddings: createEmbeddingsClient(config.embeddings) } : {}),
    });
    const { documents } = await engine.rebuild();
    console.log(`rebuilt meilisearch index "${config.meiliIndex}": ${documents} documents`);
  } finally {
    await database.close();
  }
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
}
