/**
 * MCP's on-demand gh: indexing (SPEC 2.5, 2.6): an unindexed public repository named through resolve_skill
 * starts its indexing and says so, exactly as GET /v1/skills does (services/indexing/missing-gh.ts), then
 * serves the skill once the real in-process crawler has indexed it from the GitHub stand-in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CrawlingHub, skillFile, startCrawlingHub, until } from './support/crawling-hub.js';

let hub: CrawlingHub;

beforeAll(async () => {
  hub = await startCrawlingHub(
    'mcp_indexing',
    { 'acme/late': { 'tools/lint/SKILL.md': skillFile('lint', 'Lints the code.') } },
    { INDEX_REQUESTS_PER_MINUTE: '1000' },
  );
}, 120_000);

afterAll(async () => {
  await hub?.close();
});

async function resolveSkill(identity: string) {
  const res = await hub.app.inject({
    method: 'POST',
    url: '/mcp',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    payload: {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'resolve_skill', arguments: { identity } },
    },
  });
  expect(res.statusCode).toBe(200);
  return res.json().result as { isError?: boolean; structuredContent: Record<string, unknown> };
}

describe('resolve_skill of an unindexed gh: repository', () => {
  it('starts indexing, says so with the status URL and when to retry, then serves the skill', async () => {
    const first = await resolveSkill('@skills:gh:acme/late/tools/lint');
    expect(first.isError).toBe(true);
    expect(first.structuredContent).toMatchObject({
      status: 404,
      code: 'not-found',
      indexStatus: 'queued',
      retryAfterSeconds: 5,
      detail: 'gh:acme/late is not indexed yet; indexing has started, retry shortly',
    });
    expect(first.structuredContent.statusUrl).toMatch(/\/v1\/repos\/acme\/late$/);
    const served = await until(
      () => resolveSkill('gh:acme/late/tools/lint'),
      (r) => !r.isError,
    );
    expect(served.structuredContent).toMatchObject({ kind: 'skill', name: 'lint' });
  });
});
