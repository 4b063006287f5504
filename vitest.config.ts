import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

// Workspace packages export their TypeScript sources under the "@atskills/source" condition,
// so tests run against src/ without a build step.
const conditions = ['@atskills/source', ...defaultServerConditions];

// Two projects. `unit`: tests beside the code (`src/**/*.test.ts`), the architecture rules and the docs checks: no
// database, Redis or network servers, so `npm run test:unit` runs anywhere in seconds. `integration`:
// everything under a `test/` folder (real Postgres, Redis, git over HTTP, processes). `npm test` runs both.
const UNIT = [
  '{apps,packages}/*/src/**/*.test.ts',
  'test/architecture/**/*.test.ts',
  'test/docs/**/*.test.ts',
];
// Tests beside code that still need Postgres or Redis; they count as integration until they move under test/.
const BESIDE_CODE_INTEGRATION = ['packages/crawler/src/schedule.test.ts'];
const EXCLUDE = ['**/node_modules/**', '**/dist/**', 'bench/work/**'];
// Tests that run last, one at a time: those that drive Chromium (a browser sharing the 2-core CI machine with
// another test file's servers missed its 60 s limit) and those that SIGKILL real processes mid-work (a killed
// client's next resolve failed once beside another file's load, not reproduced in 10 runs alone under load).
// Also the search sync's tests, which count what a sync sends: its change mark is the oldest transaction
// running anywhere on the Postgres server, so another file's open transaction holds it back and rows already
// sent come again (harmless, by design; all three tests failed so once, sending 2 and 4 where 0 and 2 were due).
const SERIAL = [
  '**/test/**/*-browser.test.ts',
  'apps/cli/test/processes.test.ts',
  'apps/crawler/test/worker-kill.test.ts',
  'apps/api/test/ops-search-sync.test.ts',
];
// Unit test files run two at a time (no services), integration files too (each has its own database and queue
// prefix): 941 s one at a time, 757 s two at a time. Two at a time once hung the worker-kill crawl (a
// correlated subquery bound to the wrong table, fixed in 1f8b9b7).
const UNIT_WORKERS = 2;
const INTEGRATION_WORKERS = 2;
// Unit and integration files share their worker's module cache (isolate: false): importing the app's sources
// afresh in every file took about 4 s of CPU a file (248 s of the run in all; the integration files 520 s ->
// 381 s). Every file builds its own hub, database and queue prefix, none changes process.env, and fake
// timers are put back after each test. The serial files (processes killed, Chromium) stay isolated.
const SHARED_MODULES = { isolate: false } as const;

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          ...SHARED_MODULES,
          include: UNIT,
          exclude: [...EXCLUDE, ...BESIDE_CODE_INTEGRATION],
          maxWorkers: UNIT_WORKERS,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          ...SHARED_MODULES,
          include: ['**/test/**/*.test.ts', ...BESIDE_CODE_INTEGRATION],
          exclude: [...EXCLUDE, ...SERIAL, 'test/architecture/**', 'test/docs/**'],
          maxWorkers: INTEGRATION_WORKERS,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'serial',
          include: SERIAL,
          exclude: EXCLUDE,
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
