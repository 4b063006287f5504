/**
 * Writes openapi.yaml at the repository root from the hub's route schemas (the same document the app
 * serves at /openapi.json). Run `npm run openapi` after changing a route; a test fails while the
 * committed file differs from what the routes produce.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildApp, loadConfig } from '@atskills/api';
import { connectPostgres } from '@atskills/db';
import { stringify } from 'yaml';

/** Where the committed document lives. */
export const OPENAPI_FILE = path.resolve(import.meta.dirname, '..', 'openapi.yaml');

const HEADER = '# generated, do not edit, run npm run openapi\n';

/** The OpenAPI document of the hub as YAML, exactly as it should be committed. */
export async function renderOpenapi(): Promise<string> {
  // Building the app needs a database handle but generating the document never queries it, so an
  // unconnected pool to nowhere is enough (pg connects lazily).
  const database = connectPostgres({ url: 'postgres://openapi@127.0.0.1:1/openapi' });
  const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent' }), { database });
  try {
    return HEADER + stringify(app.swagger(), { lineWidth: 0, aliasDuplicateObjects: false });
  } finally {
    await app.close();
    await database.close();
  }
}

/** The committed document, or '' when there is none yet. */
export async function readCommittedOpenapi(): Promise<string> {
  return readFile(OPENAPI_FILE, 'utf8').catch(() => '');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const text = await renderOpenapi();
  await writeFile(OPENAPI_FILE, text);
  console.log(`wrote ${path.relative(process.cwd(), OPENAPI_FILE)} (${text.length} bytes)`);
  process.exit(0);
}
