import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCommittedOpenapi, renderOpenapi } from '../../../scripts/generate-openapi.js';
import { createTestHub, type TestHub } from './support/app.js';

let hub: TestHub;

beforeAll(async () => {
  hub = await createTestHub('openapi');
});
afterAll(async () => {
  await hub?.close();
});

describe('OpenAPI', () => {
  it('the committed openapi.yaml is what the routes produce (run `npm run openapi` to refresh it)', async () => {
    const committed = await readCommittedOpenapi();
    expect(committed.startsWith('# generated, do not edit, run npm run openapi\n')).toBe(true);
    expect(committed).toBe(await renderOpenapi());
  });

  it('serves the document at /openapi.json and a reference page at /docs', async () => {
    const doc = (await hub.app.inject({ url: '/openapi.json' })).json();
    expect(doc.openapi).toBe('3.1.0');
    for (const path of [
      '/search',
      '/v1/search',
      '/v1/skills/{identity}',
      '/v1/archive/{identity}',
      '/v1/files/{identity}',
      '/v1/resolve',
      '/v1/stats',
    ]) {
      expect(doc.paths[path], path).toBeDefined();
    }
    const search = doc.paths['/search'].get;
    expect(search.operationId).toBe('search');
    expect(search.responses['400']).toBeDefined();
    const docs = await hub.app.inject({ url: '/docs' });
    expect(docs.statusCode).toBeLessThan(400);
    const page =
      docs.statusCode === 200 ? docs : await hub.app.inject({ url: docs.headers.location as string });
    expect(page.body).toContain('swagger');
  });
});
