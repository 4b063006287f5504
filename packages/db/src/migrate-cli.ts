import { connectDatabase, databaseOptions } from './client.js';
import { migrate } from './migrate.js';

// `npm run db:migrate`: applies migrations to DATABASE_URL, or to the embedded database in ./.data/db.
const handle = await connectDatabase(
  databaseOptions('migrate', {
    url: process.env.DATABASE_URL || undefined,
    dataDir: process.env.ATSKILLS_DATA_DIR || '.data',
  }),
);
await migrate(handle);
console.log(`migrations applied (${handle.mode}: ${handle.location})`);
await handle.close();
