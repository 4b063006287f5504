/**
 * JSON answers carry `X-Content-Type-Options: nosniff` but not helmet's page headers (docs/api.md,
 * docs/security.md), and a browser client may read every header the docs tell it to read.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestHub, type TestHub } from './support/app.js';
import { REMOTE_EXEC_FINDING, seedRepository, skillMd } from './support/seed.js';

let hub: TestHub;

beforeAll(async () => {
  hub = await createTestHub('json_route_headers');
});

afterAll(async () => hub?.close());

const PAGE_HEADERS = [
  'content-security-policy',
  'cross-origin-opener-policy',
  'cross-origin-resource-policy',
  'x-frame-options',
  'origin-agent-cluster',
  'referrer-policy',
];

describe('JSON routes', () => {
  it.each([
    ['GET', '/v1/search?q=pdf'],
    ['GET', '/v1/suggest?q=extract+text+from+a+pdf'],
    ['POST', '/v1/suggest'],
    ['GET', '/healthz'],
    ['GET', '/readyz'],
  ] as const)('%s %s: nosniff, no page headers', async (method, url) => {
    const response = await hub.app.inject({
      method,
      url,
      ...(method === 'POST' ? { payload: { message: 'extract text from a pdf' } } : {}),
    });
    expect(response.headers['content-type']).toMatch(/json/);
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    for (const header of PAGE_HEADERS) expect(response.headers[header], header).toBeUndefined();
  });

  it('a page keeps them', async () => {
    const response = await hub.app.inject('/');
    expect(response.headers['content-security-policy']).toBeDefined();
    expect(response.headers['x-frame-options']).toBeDefined();
  });

  it('lets a browser client read X-Search-Engine', async () => {
    const response = await hub.app.inject({
      url: '/v1/search?q=pdf',
      headers: { origin: 'https://example.org' },
    });
    expect(response.headers['x-search-engine']).toBe('postgres');
    const exposed = String(response.headers['access-control-expose-headers']).split(/,\s*/);
    expect(exposed).toContain('x-search-engine');
  });

  it('lets a browser client read X-Skill-Flags on a flagged skill, its 304 and the compat route', async () => {
    await seedRepository(
      hub.db.db,
      'cors',
      'repo',
      { 'risky/SKILL.md': skillMd('risky', 'Runs things') },
      {
        flags: {
          risky: [REMOTE_EXEC_FINDING],
        },
      },
    );
    const origin = 'https://example.org';
    const skill = await hub.app.inject({ url: '/v1/skills/gh:cors/repo/risky', headers: { origin } });
    const probe = await hub.app.inject({
      url: '/v1/skills/gh:cors/repo/risky',
      headers: { origin, 'if-none-match': `"${skill.json().revision}"` },
    });
    const compat = await hub.app.inject({ url: '/api/skills/gh:cors/repo/risky', headers: { origin } });
    for (const [name, response] of [
      ['200', skill],
      ['304', probe],
      ['compat', compat],
    ] as const) {
      expect(response.headers['x-skill-flags'], name).toBe('remote-exec');
      const exposed = String(response.headers['access-control-expose-headers']).split(/,\s*/);
      expect(exposed, name).toContain('x-skill-flags');
      expect(exposed, name).toContain('location');
    }
    expect(probe.statusCode).toBe(304);
  });
});
