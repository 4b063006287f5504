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
        test: { name: 'unit', include: UNIT, exclude: [...EXCLUDE, ...BESIDE_CODE_INTEGRATION] },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['**/test/**/*.test.ts', ...BESIDE_CODE_INTEGRATION],
          exclude: [...EXCLUDE, 'test/architecture/**', 'test/docs/**'],
        },
      },
    ],
  },
});
