// The browsing pages and feeds over the real app and a real test database (app.inject): the home page's lists,
// owner and namespace pages, collection pages with sub-collections, revision history, and the Atom feeds,
// each checked for what an anonymous viewer must never see.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestHub, type TestHub } from './support/app.js';
import { auth, type Tokens } from './teams-fixtures.js';
import { seedBrowseFixtures } from './web-browse-fixtures.js';

let hub: TestHub;
let tokens: Tokens;

beforeAll(async () => {
  hub = await createTestHub('web_browse');
  tokens = await seedBrowseFixtures(hub.app, hub.db.db);
});

afterAll(async () => {
  await hub?.close();
});

async function get(url: string, headers: Record<string, string> = {}) {
  const res = await hub.app.inject({ method: 'GET', url, headers });
  return { status: res.statusCode, headers: res.headers, body: res.body };
}

/** The text of one `<section aria-labelledby=id>` of a page. */
function section(body: string, id: string): string {
  const start = body.indexOf(`aria-labelledby="${id}"`);
  expect(start, `section ${id}`).toBeGreaterThan(-1);
  return body.slice(start, body.indexOf('</section>', start));
}

describe('home page', () => {
  it('shows the index at a glance, the browse lists and the feed link', async () => {
    const res = await get('/');
    expect(res.status).toBe(200);
    expect(res.body).toContain('<h2 id="status-title">Index status</h2>');
    expect(res.body).toContain(
      '<link rel="alternate" type="application/atom+xml" title="New and updated skills" href="/feed.xml">',
    );
    const used = section(res.body, 'most-used');
    expect(used).toContain('href="/s/gh:acme/tools/skills/deploy-runbook"');
    expect(used).toContain('7 uses this week');
    // Private skills with more uses are not listed to an anonymous viewer.
    expect(used).not.toContain('hidden');
    expect(used).not.toContain('secret');
    const added = section(res.body, 'recently-added');
    expect(added.indexOf('pwn-check')).toBeGreaterThan(-1);
    expect(added).toContain('added 2026-11-30');
    const updated = section(res.body, 'recently-updated');
    // The newest change first.
    expect(updated.match(/href="\/s\/([^"]+)"/)?.[1]).toBe('gh:acme/tools/skills/rollback');
    const owners = section(res.body, 'by-owner');
    expect(owners).toContain('<a href="/o/bigco">gh:bigco</a>');
    expect(owners).toMatch(/130 skills · 1 repository/);
    expect(owners).toContain('<a href="/n/pubteam">hub:pubteam</a>');
    expect(owners).toMatch(/3 skills · 1 collection</);
    const repos = section(res.body, 'by-repository');
    // 130 skills: over a menu's 128, its menu page is a 422; the repository page lists them all.
    expect(repos).toContain('<a href="/r/bigco/mono">bigco/mono</a>');
    expect(res.body).not.toContain('href="/s/gh:bigco/mono"');
    expect(repos).toContain('<a href="/r/acme/tools">index status</a>');
    const collections = section(res.body, 'by-collection');
    expect(collections).toContain('<a href="/s/hub:pubteam/guides">pubteam/guides</a>');
    expect(collections).toContain('<a href="/s/hub:team/kit">team/kit</a>');
    for (const text of ['secretco', 'pubteam/hidden', 'legacy-deploy']) expect(res.body).not.toContain(text);
  });

  it('lists a team its private collections too', async () => {
    const res = await get('/', auth(tokens, 'reader'));
    expect(section(res.body, 'by-collection')).toContain('href="/s/hub:pubteam/hidden"');
    expect(section(res.body, 'most-used')).toContain('href="/s/hub:pubteam/hidden/x"');
  });

  it('offers every search filter of GET /search, open when one is set', async () => {
    const plain = await get('/');
    for (const name of ['q', 'source', 'owner', 'repo', 'namespace']) {
      expect(plain.body).toMatch(new RegExp(`<(input|select)[^>]* name="${name}"`));
    }
    expect(plain.body).toContain('<details class="filters">');
    const filtered = await get('/?q=guide&namespace=pubteam');
    expect(filtered.body).toContain('<details class="filters" open>');
    expect(filtered.body).toContain('id="filter-namespace" name="namespace" value="pubteam"');
    expect(filtered.body).toContain('data-identity="hub:pubteam/guides/a"');
    expect(filtered.body).not.toContain('data-identity="gh:');
  });
});

describe('owner and namespace pages', () => {
  it('lists a GitHub owner its repositories with counts, in any case', async () => {
    const res = await get('/o/ACME');
    expect(res.status).toBe(200);
    expect(res.body).toContain('<h1 class="skill-title"><code>gh:acme</code></h1>');
    expect(res.body).toMatch(/3 skills in\s+1 repository/);
    expect(section(res.body, 'containers')).toContain('<a href="/s/gh:acme/tools">tools</a>');
    expect(res.body).toContain('href="/o/acme/feed.xml"');
    expect(res.body).toContain('name="owner" value="acme"');
    expect(res.body).not.toContain('legacy-deploy');
  });

  it('shows a namespace only what the viewer may read', async () => {
    const anonymous = await get('/n/pubteam');
    expect(anonymous.status).toBe(200);
    expect(anonymous.body).toContain('<a href="/s/hub:pubteam/guides">guides</a>');
    expect(anonymous.body).not.toContain('pubteam/hidden');
    const member = await get('/n/pubteam', auth(tokens, 'reader'));
    expect(member.body).toContain('<a href="/s/hub:pubteam/hidden">hidden</a>');
  });

  it('answers 404 pages for unknown owners and for namespaces with only private skills', async () => {
    for (const url of ['/o/nobody-here', '/n/secretco', '/n/nobody', '/o/acme%2Ftools']) {
      const res = await get(url);
      expect(res.status, url).toBe(404);
      expect(res.headers['content-type'], url).toBe('text/html; charset=utf-8');
      expect(res.body).not.toContain('deploy-secret');
    }
    // A GitHub owner is not a hub namespace: /o/ is for gh, /n/ for hub.
    expect((await get('/n/acme')).status).toBe(404);
    expect((await get('/o/pubteam')).status).toBe(404);
  });
});

describe('collection, menu and over-cap pages', () => {
  it('lists a collection its skills and sub-collections with counts', async () => {
    const res = await get('/s/hub:pubteam/guides');
    expect(res.status).toBe(200);
    expect(section(res.body, 'subcollections-title')).toContain(
      '<a href="/s/hub:pubteam/guides/more"><code>more/</code></a> <span class="meta">2 skills</span>',
    );
    expect(res.body).toContain('<h2 class="list-title" id="skills-title">Skills (3)</h2>');
    expect(res.body).toContain('<a href="/n/pubteam">hub:pubteam</a>');
  });

  it('keeps a private collection and its skills a 404 page to anyone outside the team', async () => {
    for (const url of [
      '/s/hub:pubteam/hidden',
      '/s/hub:pubteam/hidden/x',
      '/badge/hub:pubteam/hidden/x.svg',
    ]) {
      expect((await get(url)).status, url).toBe(404);
      expect((await get(url, auth(tokens, 'reader'))).status, url).toBe(200);
    }
  });

  it('offers only the commands the client runs on a folder', async () => {
    const res = await get('/s/hub:pubteam/guides');
    expect(res.body).toContain('atskills get hub:pubteam/guides\natskills install hub:pubteam/guides');
    // A folder is never saved whole: no save command or :save reference for the folder itself.
    expect(res.body).not.toContain('atskills save hub:pubteam/guides\n');
    expect(res.body).not.toContain('@skills:hub:pubteam/guides:save');
  });

  it('lists the sub-collections of an over-cap folder as the API does', async () => {
    const page = await get('/s/gh:bigco/mono/packs');
    const api = await get('/v1/skills/gh:bigco/mono/packs');
    expect(page.status).toBe(422);
    expect(api.status).toBe(422);
    const subs = (JSON.parse(api.body) as { subcollections: { identity: string; skills: number }[] })
      .subcollections;
    expect(subs.map((s) => s.identity)).toEqual(['gh:bigco/mono/packs/alpha', 'gh:bigco/mono/packs/beta']);
    for (const sub of subs) {
      expect(page.body).toContain(
        `<a href="/s/${sub.identity}"><code>${sub.identity}</code></a> - ${sub.skills} skills`,
      );
    }
    expect(page.body).not.toMatch(/@skills:[^ <]*:(save|install)/);
    expect(page.body).not.toContain('atskills save');
    expect(page.body).toContain('<a href="/r/bigco/mono">Every skill of bigco/mono</a>');
  });

  it('links an owner page to where an over-cap repository can be read, which answers 200', async () => {
    const owner = await get('/o/bigco');
    expect(owner.status).toBe(200);
    const link = /<a href="([^"]+)">mono<\/a>/.exec(owner.body)?.[1];
    expect(link).toBe('/r/bigco/mono');
    // (These fixtures have no crawl record, so that page lists nothing here; after a crawl it lists them all.)
    expect((await get(link!)).status).toBe(200);
  });
});

describe('skill page', () => {
  it('lists the revision history with dates, hiding a revision published privately', async () => {
    const anonymous = await get('/s/hub:pubteam/guides/a');
    expect(anonymous.status).toBe(200);
    const history = section(anonymous.body, 'history-title');
    expect(history).toContain('Revision history (1)');
    expect(history).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d UTC · current/);
    expect(anonymous.body).toContain('Guide a, rewritten');

    const member = await get('/s/hub:pubteam/guides/a', auth(tokens, 'reader'));
    const memberHistory = section(member.body, 'history-title');
    expect(memberHistory).toContain('Revision history (2)');
    const older = memberHistory.match(/href="(\/s\/hub:pubteam\/guides\/a\?rev=[^"]+)"/)?.[1];
    expect(older).toBeDefined();
    const pinned = await get(older as string, auth(tokens, 'reader'));
    expect(pinned.status).toBe(200);
    expect(pinned.body).toContain('Guide a, first draft');
    expect(pinned.body).toMatch(/<li aria-current="page">[\s\S]*?· shown/);
    // The same link is a 404 to anyone outside the team.
    expect((await get(older as string)).status).toBe(404);
  });

  it('shows uses and labels each cell of the safety-flags table for the phone layout', async () => {
    const deploy = await get('/s/gh:acme/tools/skills/deploy-runbook');
    expect(deploy.body).toContain('<dt>Uses</dt><dd>7 this week · 7 all time');
    const flagged = await get('/s/gh:acme/tools/skills/installer');
    expect(flagged.body).toContain('<table class="data stack">');
    for (const label of ['Rule', 'Severity', 'Where', 'Excerpt', 'Why', 'Status']) {
      expect(flagged.body).toContain(`<td data-label="${label}">`);
    }
  });
});

describe('Atom feeds', () => {
  it('/feed.xml: valid Atom of public skills, newest change first, cacheable with an ETag', async () => {
    const res = await get('/feed.xml', auth(tokens, 'reader'));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/atom+xml; charset=utf-8');
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    expect(
      res.body.startsWith(
        '<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">',
      ),
    ).toBe(true);
    expect(res.body).toMatch(/<id>http:\/\/[^<]+\/feed\.xml<\/id>/);
    expect(res.body).toContain('<updated>2026-11-30T11:00:00.000Z</updated>');
    const entries = res.body.split('<entry>').slice(1);
    expect(entries.length).toBe(50);
    for (const entry of entries) {
      for (const tag of ['id', 'title', 'published', 'updated', 'summary'])
        expect(entry).toContain(`<${tag}>`);
      expect(entry).toMatch(/<link rel="alternate" type="text\/html" href="http:\/\/[^"]+\/s\/[^"]+"\/>/);
    }
    expect(entries[0]).toContain('/s/gh:acme/tools/skills/rollback');
    // Private skills never, whoever asks (the feed is cached publicly); gone ones neither.
    for (const text of ['pubteam/hidden', 'secretco', 'legacy-deploy']) expect(res.body).not.toContain(text);
    // Markup in a description arrives escaped.
    const owner = await get('/o/mallory/feed.xml');
    expect(owner.body).toContain('A harmless looking skill &lt;b&gt;with&lt;/b&gt; markup');

    const again = await get('/feed.xml', { 'if-none-match': res.headers.etag as string });
    expect(again.status).toBe(304);
    expect(again.body).toBe('');
  });

  it('per owner and namespace, 404 for owners without public skills', async () => {
    const acme = await get('/o/acme/feed.xml');
    expect(acme.status).toBe(200);
    expect(acme.body).toContain('<title>New and updated skills of gh:acme</title>');
    expect(acme.body.split('<entry>').length - 1).toBe(3);
    expect(acme.body).toMatch(/<link rel="alternate" type="text\/html" href="http:\/\/[^"]+\/o\/acme"\/>/);
    const team = await get('/n/pubteam/feed.xml', auth(tokens, 'reader'));
    expect(team.status).toBe(200);
    expect(team.body.split('<entry>').length - 1).toBe(3);
    expect(team.body).not.toContain('pubteam/hidden');
    expect((await get('/n/secretco/feed.xml')).status).toBe(404);
    expect((await get('/o/nobody-here/feed.xml')).status).toBe(404);
  });
});
