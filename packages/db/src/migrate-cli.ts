import { ConfigError, optionalUrlOf, parseSettings } from '@atskills/protocol/config';
import { z } from 'zod';
import { connectDatabase, databaseOptions } from './client.js';
import { migrate } from './migrate.js';

/** What `npm run db:migrate` reads: the hub's database variables, with the hub's defaults. */
const MigrateEnvSchema = z.object({
  DATABASE_URL: optionalUrlOf('postgres', 'postgresql').describe(
    'The PostgreSQL server to migrate; unset, the embedded database in `$ATSKILLS_DATA_DIR/db`.',
  ),
  ATSKILLS_DATA_DIR: z
    .string()
    .trim()
    .min(1)
    .default('./.data')
    .describe('The local data folder holding the embedded database.'),
});

/** The settings, or one line naming the bad variable and exit 1. */
function readSettings() {
  try {
    return parseSettings(MigrateEnvSchema, process.env, 'configuration');
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(`error: ${error.message}`);
    process.exit(1);
  }
}

// `npm run db:migrate`: applies migrations to DATABASE_URL, or to the embedded database in ./.data/db.
const settings = readSettings();
const handle = await connectDatabase(
  databaseOptions('migrate', { url: settings.databaseUrl, dataDir: settings.atskillsDataDir }),
);
await migrate(handle);
console.log(`migrations applied (${handle.mode}: ${handle.location})`);
await handle.close();
