#!/usr/bin/env node
// The `atskills` bin. It is committed (not built) so `npm ci` can link it before `npm run build` has made
// dist/: npm skips bins whose file does not exist yet, and `npx atskills` would then look on the registry.
import { existsSync } from 'node:fs';

const main = new URL('../dist/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('atskills is not built yet: run `npm run build` at the repository root first.\n');
  process.exit(1);
}
await import(main.href);
