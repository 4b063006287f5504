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

  it('documents what a generated client meets: real paths, problem+json errors, 304, 429 and tokens', async () => {
    // biome-ignore lint/suspicious/noExplicitAny: the document is read field by field
    const doc: any = (await hub.app.inject({ url: '/openapi.json' })).json();
    // The report route is /v1/skills/<identity>/reports (a wildcard route that checks its suffix).
    expect(doc.paths['/v1/skills/{identity}/reports'].post.operationId).toBe('reportSkill');
    expect(doc.paths['/v1/skills/{identity}'].post).toBeUndefined();
    for (const [path, item] of Object.entries<
      Record<string, { responses: Record<string, { content?: object }> }>
    >(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        for (const [status, response] of Object.entries(operation.responses ?? {})) {
          if (Number(status) < 300 || status === '304') continue;
          // /mcp refuses a malformed JSON-RPC request with a JSON-RPC error, which its clients read.
          const jsonRpc = path === '/mcp' && ['400', '406', '415'].includes(status);
          expect(Object.keys(response.content ?? {}), `${method} ${path} ${status}`).toEqual([
            jsonRpc ? 'application/json' : 'application/problem+json',
          ]);
        }
      }
    }
    const getSkill = doc.paths['/v1/skills/{identity}'].get;
    expect(getSkill.responses['304']).toBeDefined();
    expect(getSkill.responses['429']).toBeDefined();
    expect(doc.paths['/v1/archive/{identity}'].get.responses['304']).toBeDefined();
    expect(doc.paths['/healthz'].get.responses['429']).toBeUndefined();
    expect(doc.components.securitySchemes.bearerToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{}, { bearerToken: [] }]);
    expect(doc.paths['/v1/collections/{namespace}/{collection}'].put.security).toEqual([{ bearerToken: [] }]);
    expect(doc.paths['/v1/search'].get.security).toBeUndefined();
  });
});
