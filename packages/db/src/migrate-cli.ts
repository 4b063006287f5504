import { connectDatabase } from './client.js';
import { migrate } from './migrate.js';

// `npm run db:migrate`: applies migrations to DATABASE_URL, or to the embedded database in ./.data/db.
const handle = await connectDatabase({
  url: process.env.DATABASE_URL,
  embeddedDir: process.env.ATSKILLS_DATA_DIR ? `${process.env.ATSKILLS_DATA_DIR}/db` : '.data/db',
});
await migrate(handle);
console.log(`migrations applied (${handle.mode}: ${handle.location})`);
await handle.close();
