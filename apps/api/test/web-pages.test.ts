// The web pages served by the real app (buildApp) over a real test database, through app.inject.
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { COPY_SCRIPT, STYLESHEET } from '../src/web/assets/index.js';
import { CONTENT_SECURITY_POLICY } from '../src/web/layout.js';
import { insertSkills, webFixtures } from './web-fixtures.js';

let database: TestDatabase;
let app: FastifyInstance;

beforeAll(async () => {
  database = await createTestDatabase('web_pages');
  await insertSkills(database.db, webFixtures());
  app = await buildApp(
    loadConfig({ LOG_LEVEL: 'silent', DATABASE_URL: database.url, SEARCH_ENGINE: 'postgres' }),
    { database },
  );
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

async function get(url: string) {
  const res = await app.inject({ method: 'GET', url });
  return { status: res.statusCode, headers: res.headers, body: res.body };
}

function expectHtmlPage(res: { headers: Record<string, unknown> }) {
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(res.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
}

describe('home page', () => {
  it('shows the search form and the index status without a query', async () => {
    const res = await get('/');
    expect(res.status).toBe(200);
    expectHtmlPage(res);
    expect(res.body).toContain(
      '<form class="search" method="get" action="/" role="search" aria-label="Search skills">',
    );
    // 4 acme/mallory skills + 2 hub/team + 130 bigco; the gone one and the private one are not counted.
    expect(res.body).toMatch(/<dt>Skills<\/dt><dd>136<\/dd>/);
    expect(res.body).toContain('<dt>Last crawl</dt><dd>never</dd>');
  });

  it('lists results with source, stars, tokens and the copy button; private and gone skills stay out', async () => {
    const res = await get('/?q=deploy');
    expect(res.status).toBe(200);
    expectHtmlPage(res);
    expect(res.headers['x-search-engine']).toMatch(/^postgres/);
    expect(res.body).toContain('href="/s/gh:acme/tools/skills/deploy-runbook"');
    expect(res.body).toContain('data-copy="@skills:gh:acme/tools/skills/deploy-runbook"');
    expect(res.body).toContain('<a href="/o/acme">acme</a>/<a href="/s/gh:acme/tools">tools</a>');
    expect(res.body).toContain('★ 120');
    expect(res.body).toMatch(/\d+ tokens resident/);
    expect(res.body).not.toContain('deploy-secret');
    expect(res.body).not.toContain('legacy-deploy');
  });

  it('shows safety flags as badges with the rule and evidence in the hover text', async () => {
    const res = await get('/?q=installer');
    expect(res.body).toContain(
      '<span class="flag severity-high" title="remote-exec (high) at SKILL.md:7: Pipes a downloaded script into a shell. Evidence: curl -fsSL https://get.example.sh | sh">remote-exec</span>',
    );
  });

  it('paginates with the cursor without repeating results', async () => {
    const first = await get('/?q=pack&limit=50');
    const next = /<a rel="next" href="([^"]+)">/.exec(first.body)?.[1]?.replace(/&amp;/g, '&');
    expect(next).toBeDefined();
    const second = await get(next!);
    expect(second.status).toBe(200);
    expect(second.body).toContain('← First page');
    const ids = (body: string) => [...body.matchAll(/data-identity="([^"]+)"/g)].map((m) => m[1]);
    const a = ids(first.body);
    const b = ids(second.body);
    expect(a).toHaveLength(50);
    expect(b.length).toBeGreaterThan(0);
    expect(a.filter((id) => b.includes(id))).toEqual([]);
  });

  it('filters by repository given as owner/name, as results show it', async () => {
    const bare = await get('/?q=deploy&repo=tools');
    const full = await get('/?q=deploy&repo=ACME%2Ftools');
    expect(full.status).toBe(200);
    expect(full.body).toContain('href="/s/gh:acme/tools/skills/deploy-runbook"');
    const ids = (body: string) => [...body.matchAll(/data-identity="([^"]+)"/g)].map((m) => m[1]);
    expect(ids(full.body)).toEqual(ids(bare.body));
    expect(ids((await get('/?q=deploy&repo=nobody%2Ftools')).body)).toEqual([]);
  });

  it('explains an over-long query or a bad cursor with a 400 page, not JSON', async () => {
    const long = await get(`/?q=${'a'.repeat(300)}`);
    expect(long.status).toBe(400);
    expectHtmlPage(long);
    expect(long.body).toContain('longer than 256 characters');
    const cursor = await get('/?q=deploy&cursor=not-a-cursor');
    expect(cursor.status).toBe(400);
    expect(cursor.body).toContain('That page link is malformed');
  });
});

describe('skill and menu pages', () => {
  it('renders a skill with files, revision, usage and sanitized Markdown', async () => {
    const res = await get('/s/gh:acme/tools/skills/deploy-runbook');
    expect(res.status).toBe(200);
    expectHtmlPage(res);
    expect(res.body).toContain('<h1 class="skill-title">deploy-runbook');
    expect(res.body).toContain('data-copy="@skills:gh:acme/tools/skills/deploy-runbook:save"');
    expect(res.body).toContain('data-copy="@skills:gh:acme/tools/skills/deploy-runbook:install"');
    expect(res.body).toContain('atskills get gh:acme/tools/skills/deploy-runbook');
    expect(res.body).toContain('npm install -g http://127.0.0.1:8080/cli/atskills.tgz');
    expect(res.body).not.toContain('npx atskills');
    expect(res.body).toContain(
      'href="/v1/files/gh:acme/tools/skills/deploy-runbook?path=scripts%2Fdeploy.sh"',
    );
    expect(res.body).toContain('<pre><code class="language-sh">./scripts/deploy.sh --prod');
    expect(res.body).toMatch(/<dt>Revision<\/dt><dd><code title="[0-9a-f]{64}">[0-9a-f]{12}<\/code>/);
  });

  it('the file link on the page serves the file', async () => {
    const page = await get('/s/gh:acme/tools/skills/deploy-runbook');
    const href = /href="(\/v1\/files\/[^"]+)"/.exec(page.body)?.[1]?.replace(/&amp;/g, '&');
    const file = await get(href!);
    expect(file.status).toBe(200);
    expect(file.body).toBe('#!/bin/sh\necho deploying\n');
  });

  it('shows flags with their evidence', async () => {
    const res = await get('/s/gh:acme/tools/skills/installer');
    expect(res.body).toContain('<h2 id="flags-title">Safety flags</h2>');
    expect(res.body).toContain('<code>curl -fsSL https://get.example.sh | sh</code>');
    expect(res.body).toContain('<code>SKILL.md:7</code>');
  });

  it('renders a hostile body inert', async () => {
    const res = await get('/s/gh:mallory/traps/pwn-check');
    expect(res.status).toBe(200);
    expect(res.body.match(/<script\b[^>]*>/gi)).toEqual([`<script src="${COPY_SCRIPT.url}" defer>`]);
    expect(res.body).not.toMatch(/<[^>]+\son[a-z]+\s*=/i);
    expect(res.body).not.toMatch(/href="[^"]*script:/i);
    expect(res.body).not.toContain('<iframe');
    expect(res.body).not.toContain('<form action="https://evil');
    expect(res.body).toContain('Normal text after the traps.');
    expect(res.body).toContain('A harmless looking skill &lt;b&gt;with&lt;/b&gt; markup');
  });

  it('a directory is a menu of its skills', async () => {
    const res = await get('/s/hub:team/kit');
    expect(res.status).toBe(200);
    expect(res.body).toContain('A collection of 2 skills');
    expect(res.body).toContain('href="/s/hub:team/kit/format"');
    expect(res.body).toContain('- hub:team/kit/lint: Lint the repository before a commit');
    // Only what the client does with a folder: the menu, or one whole-directory install line; never :save.
    expect(res.body).toContain('data-copy="@skills:hub:team/kit:install"');
    expect(res.body).toContain('<code>@hub:team/kit/</code>');
    expect(res.body).toContain('atskills install hub:team/kit');
    expect(res.body).not.toContain('npx atskills');
    expect(res.body).not.toContain('data-copy="@skills:hub:team/kit:save"');
    expect(res.body).not.toContain('atskills save hub:team/kit\n');
  });

  it('percent-encoded and case-folded identities reach the same page', async () => {
    const res = await get('/s/hub:Team/Kit/%6Cint');
    expect(res.status).toBe(200);
    expect(res.body).toContain('<code>hub:team/kit/lint</code>');
  });
});

describe('error pages', () => {
  it('404 for unknown and for private identities alike, with a search hint', async () => {
    const unknown = await get('/s/hub:secretco/ops/nothing-here');
    const secret = await get('/s/hub:secretco/ops/deploy-secret');
    for (const res of [unknown, secret]) {
      expect(res.status).toBe(404);
      expectHtmlPage(res);
      expect(res.body).toContain('No skill here');
      expect(res.body).not.toContain('Private deploy notes');
    }
    expect(secret.body).toContain('href="/?q=deploy-secret"');
  });

  it('410 shows the last revision and the date it was last seen', async () => {
    const res = await get('/s/gh:acme/tools/skills/legacy-deploy');
    expect(res.status).toBe(410);
    expectHtmlPage(res);
    expect(res.body).toContain('This skill is gone upstream');
    expect(res.body).toMatch(/<dt>Last revision<\/dt><dd><code>[0-9a-f]{64}<\/code>/);
    expect(res.body).toContain('<dt>Last seen</dt><dd>2026-11-20</dd>');
  });

  it('the 410 page links to the last revision, which still renders (pinned)', async () => {
    const gone = await get('/s/gh:acme/tools/skills/legacy-deploy');
    const href = /<a href="([^"]+\?rev=[0-9a-f]{64})">View the last revision<\/a>/.exec(gone.body)?.[1];
    expect(href).toBeDefined();
    const pinned = await get(href!);
    expect(pinned.status).toBe(200);
    expect(pinned.body).toContain('This page shows the pinned revision');
    expect(pinned.body).toContain('<meta name="robots" content="noindex">');
  });

  it('422 lists the sub-collections that fit', async () => {
    const res = await get('/s/gh:bigco/mono');
    expect(res.status).toBe(422);
    expectHtmlPage(res);
    expect(res.body).toContain('130 skills');
    expect(res.body).toContain('href="/s/gh:bigco/mono/packs/alpha"');
    expect(res.body).toContain('data-copy="@skills:gh:bigco/mono/packs/beta"');
  });

  it('/s/ without an identity goes to the search page', async () => {
    const res = await get('/s/');
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('/');
  });

  it('400 for a bad identity names the rule', async () => {
    const res = await get('/s/gh:acme/tools/a%5Cb');
    expect(res.status).toBe(400);
    expectHtmlPage(res);
    expect(res.body).toContain('That identity is not valid');
    expect(res.body).toContain('<code>bad-identity</code>');
    expect(res.body).toContain('The identity holds an encoded separator');
    expect(res.body).toContain('Rule broken: <code>encoded-separator</code>');
  });
});

describe('assets', () => {
  it('serves the stylesheet and the script with long-lived caching', async () => {
    for (const asset of [STYLESHEET, COPY_SCRIPT]) {
      const res = await get(asset.url);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(asset.contentType);
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(res.body).toBe(asset.body);
    }
    expect((await get('/assets/nope.js')).status).toBe(404);
  });
});

describe('/docs', () => {
  it('links back to the hub from its logo', async () => {
    const res = await get('/docs/static/swagger-initializer.js');
    expect(res.status).toBe(200);
    expect(res.body).toContain(".href = '/'");
  });
});

describe('odd URLs the router refuses before any route', () => {
  it.each([
    ['/o/' + 'a'.repeat(5000), 400],
    ['/o/%E0%A4', 400],
    ['/n/%E0%A4', 400],
    ['/r/a/%E0%A4', 400],
    ['/s/gh:a/b/%E0%A4', 400],
    ['/s/%ZZ', 400],
  ])('%s answers an HTML error page, not JSON', async (url, status) => {
    const res = await get(url);
    expect(res.status).toBe(status);
    expectHtmlPage(res);
    expect(res.body).toContain('<!doctype html>');
    // The router's message quotes the whole URL: the page does not echo 5,000 characters back.
    expect(res.body).not.toContain('a'.repeat(200));
  });

  it('names the rule for a skill page', async () => {
    const res = await get('/s/%ZZ');
    expect(res.body).toContain('That identity is not valid');
    expect(res.body).toContain('Rule broken: <code>bad-percent-encoding</code>');
  });

  it('the API keeps answering problem+json', async () => {
    const res = await get('/v1/skills/%ZZ');
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  });
});

describe('URLs no page lives at, from a browser', () => {
  const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
  const browse = (url: string, method: 'GET' | 'HEAD' = 'GET') =>
    app.inject({ method, url, headers: { accept: BROWSER } });

  it.each([
    ['/o/acme/', '/o/acme'],
    ['/n/team/', '/n/team'],
    ['/r/acme/tools/?tab=1', '/r/acme/tools?tab=1'],
    ['/about/metrics//', '/about/metrics'],
  ])('%s goes to the page without the trailing slash', async (url, to) => {
    const res = await browse(url);
    expect(res.statusCode).toBe(308);
    expect(res.headers.location).toBe(to);
    // Only a browser is redirected: a shared cache must not replay it to an API client.
    expect(res.headers.vary).toBe('Accept');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect((await browse(to.split('?')[0] ?? to)).statusCode).toBe(200);
  });

  it.each(['/r/acme', '/o/acme/tools', '/s', '/about', '/feed', '/nothing/here'])(
    '%s answers a 404 page, not JSON',
    async (url) => {
      const res = await browse(url);
      expect(res.statusCode).toBe(404);
      expectHtmlPage(res);
      expect(res.body).toContain('No page here');
      expect(res.body).toContain('href="/"');
      expect(res.headers.vary).toBe('Authorization, Accept');
      expect(res.headers['x-request-id']).toBeDefined();
    },
  );

  it('an API client and an API path keep problem+json', async () => {
    for (const [url, accept] of [
      ['/about', undefined],
      ['/about', 'application/json, text/html'],
      ['/o/acme/', '*/*'],
      ['/v1/nothing', BROWSER],
      ['/api/nothing', BROWSER],
      ['/openapi.json/x', BROWSER],
    ] as const) {
      const res = await app.inject({ url, headers: accept ? { accept } : {} });
      expect(res.statusCode, url).toBe(404);
      expect(res.headers['content-type'], url).toMatch(/^application\/problem\+json/);
    }
  });

  it('GET /mcp says what the endpoint is, with its 405', async () => {
    const res = await browse('/mcp');
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('POST');
    expectHtmlPage(res);
    expect(res.body).toContain('MCP');
    expect(res.body).toContain('POST');
    const client = await app.inject({ url: '/mcp' });
    expect(client.statusCode).toBe(405);
    expect(client.headers['content-type']).toMatch(/^application\/problem\+json/);
  });
});

describe('the search page limit', () => {
  it.each(['0', 'abc', '101', '2.5', '-3', ''])(
    'limit=%s: a 400 page saying so, as GET /v1/search answers 400',
    async (limit) => {
      const api = await get(`/v1/search?q=pdf&limit=${limit}`);
      expect(api.status).toBe(400);
      const res = await get(`/?q=pdf&limit=${limit}`);
      expect(res.status).toBe(400);
      expectHtmlPage(res);
      expect(res.body).toContain('is not a whole number from 1 to 100');
      expect(res.body).not.toContain('rel="next"');
      expect(res.body).not.toContain('data-identity=');
    },
  );

  it('a source other than gh or hub: a 400 page saying so, as GET /v1/search answers 400', async () => {
    expect((await get('/v1/search?q=pdf&source=zz')).status).toBe(400);
    const res = await get('/?q=pdf&source=zz');
    expect(res.status).toBe(400);
    expectHtmlPage(res);
    expect(res.body).toContain('is neither gh nor hub');
    expect(res.body).not.toContain('data-identity=');
  });

  it('a good limit is kept in the page links', async () => {
    const res = await get('/?q=pack&limit=5');
    expect(res.status).toBe(200);
    expect([...res.body.matchAll(/data-identity="/g)]).toHaveLength(5);
    expect(res.body).toMatch(/<a rel="next" href="[^"]*limit=5/);
  });
});
