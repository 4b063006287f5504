/**
 * The in-memory search engine inside the app: built at start while Postgres answers, kept current by the
 * change feed for writes by any process, private collections invisible exactly as in Postgres, the
 * response's corrections, and what /readyz and /metrics say about the index.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skillMd as archiveSkillMd, packCollection } from '../../../test/fixtures/archives/make.js';
import { createTestDatabase } from '../../../test/support/database.js';
import { eventually } from '../../../test/support/eventually.js';
import { createMemoryEngine } from '../src/search/memory-engine.js';
import { createPostgresEngine } from '../src/search/postgres.js';
import { createTestHub, type TestHub } from './support/app.js';
import { seedHubCollection, seedRepository, skillMd } from './support/seed.js';
import { auth, publish, seedTeam, type Tokens } from './teams-fixtures.js';

const ids = (body: { results: { identity: string }[] }) => body.results.map((r) => r.identity);

describe('in-memory search engine in the app', () => {
  let hub: TestHub;
  let tokens: Tokens;
  const search = async (q: string, headers: Record<string, string> = {}) => {
    const r = await hub.app.inject({ url: `/search?q=${encodeURIComponent(q)}`, headers });
    expect(r.statusCode).toBe(200);
    return { body: r.json(), engine: r.headers['x-search-engine'] };
  };

  beforeAll(async () => {
    hub = await createTestHub('search_memory', { SEARCH_ENGINE: 'memory' });
    tokens = await seedTeam(hub.db.db, 'acme');
    await seedRepository(hub.db.db, 'docs', 'tools', {
      'pdf-tools/SKILL.md': skillMd('pdf-tools', 'Extract text and tables from PDF files'),
      'kubernetes-deploy/SKILL.md': skillMd(
        'kubernetes-deploy',
        'Roll out a deployment to a Kubernetes cluster',
      ),
    });
    await seedHubCollection(
      hub.db.db,
      'acme',
      'vault',
      {
        'secret-sauce/SKILL.md': skillMd('secret-sauce', 'The recipe of the secret sauce'),
        'secret-menu/SKILL.md': skillMd('secret-menu', 'Dishes off the secret menu'),
      },
      { visibility: 'private' },
    );
    // Written after the app started: the change feed brings them in.
    await eventually(
      async () => (await search('secret sauce', auth(tokens, 'reader'))).body.results.length > 0,
    );
  });
  afterAll(async () => hub?.close());

  it('answers from memory once built', async () => {
    const { body, engine } = await search('pdf-tools');
    expect(engine).toBe('memory');
    expect(ids(body)[0]).toBe('gh:docs/tools/pdf-tools');
  });

  it('answers uses from memory, fresh after this process writes them', async () => {
    const resolved = await hub.app.inject({
      url: '/v1/skills/gh:docs/tools/pdf-tools',
      headers: { 'user-agent': 'atskills-test/memory-uses' },
    });
    expect(resolved.statusCode).toBe(200);
    await hub.app.uses.flush();
    const { body, engine } = await search('pdf tools');
    expect(engine).toBe('memory');
    const pdf = body.results.find((r: { identity: string }) => r.identity === 'gh:docs/tools/pdf-tools');
    expect(pdf.uses).toEqual({ week: 1, total: 1 });
  });

  it('keeps private collections invisible to callers who may not read them', async () => {
    expect(ids((await search('secret sauce')).body)).toEqual([]);
    expect(ids((await search('secret sauce', auth(tokens, 'outsider'))).body)).toEqual([]);
    const reader = ids((await search('secret', auth(tokens, 'reader'))).body);
    expect(reader).toEqual(
      expect.arrayContaining(['hub:acme/vault/secret-sauce', 'hub:acme/vault/secret-menu']),
    );
    expect(ids((await search('vault')).body)).toEqual([]);
    const folder = (await search('vault', auth(tokens, 'reader'))).body.results[0];
    expect(folder).toMatchObject({ identity: 'hub:acme/vault', kind: 'collection', skillCount: 2 });
    expect(ids((await search('secret', auth(tokens, 'admin'))).body)).toContain('hub:acme/vault/secret-menu');
  });

  it('says which words it corrected and which it ignored', async () => {
    const { body } = await search('please kubernets deploymnet');
    expect(ids(body)[0]).toBe('gh:docs/tools/kubernetes-deploy');
    expect(body.corrected).toEqual({ kubernets: 'kubernetes', deploymnet: 'deployment' });
    expect(body.ignored).toEqual(['please']);
  });

  it('shows the reading on the web search page', async () => {
    const page = await hub.app.inject({ url: '/?q=please+kubernets+deploymnet' });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Showing results for <strong>kubernetes deployment</strong>');
    expect(page.body).toContain('left out: <s>please</s>');
    expect(page.body).toContain('data-identity="gh:docs/tools/kubernetes-deploy"');
  });

  it('applies abbreviations: k8s finds kubernetes', async () => {
    expect(ids((await search('k8s')).body)).toContain('gh:docs/tools/kubernetes-deploy');
  });

  it('follows writes by other processes: new, changed and gone skills', async () => {
    await seedRepository(hub.db.db, 'late', 'comer', {
      'zeppelin-pilot/SKILL.md': skillMd('zeppelin-pilot', 'Fly a zeppelin over the city'),
    });
    await eventually(async () =>
      ids((await search('zeppelin')).body).includes('gh:late/comer/zeppelin-pilot'),
    );
    await hub.db.db.execute(
      "update skills set stars = 4242 where identity = 'gh:late/comer/zeppelin-pilot'" as never,
    );
    await eventually(async () => (await search('zeppelin')).body.results[0]?.stars === 4242);
    await hub.db.db.execute(
      "update skills set gone_at = now() where identity = 'gh:late/comer/zeppelin-pilot'" as never,
    );
    await eventually(
      async () => !ids((await search('zeppelin')).body).includes('gh:late/comer/zeppelin-pilot'),
    );
    await hub.db.db.execute("delete from skills where identity = 'gh:docs/tools/pdf-tools'" as never);
    await eventually(async () => !ids((await search('pdf-tools')).body).includes('gh:docs/tools/pdf-tools'));
  });

  it("shows a publish through this process on its author's next search", async () => {
    const res = await publish(
      hub.app,
      'acme/launch',
      packCollection({ 'rocket-launch/SKILL.md': archiveSkillMd('rocket-launch', 'Launch the rocket') }),
      auth(tokens, 'publisher'),
      'public',
    );
    expect(res.statusCode).toBeLessThan(300);
    expect(ids((await search('rocket launch')).body)).toContain('hub:acme/launch/rocket-launch');
  });

  it('reports the index on /readyz and /metrics', async () => {
    const ready = (await hub.app.inject({ url: '/readyz' })).json();
    expect(ready.checks.search).toMatchObject({ status: 'up', engine: 'memory' });
    expect(ready.checks.search.detail).toMatch(/documents in memory/);
    const metrics = (await hub.app.inject({ url: '/metrics' })).body;
    expect(metrics).toMatch(/^atskills_search_index_ready 1$/m);
    expect(Number(metrics.match(/^atskills_search_index_documents (\d+)$/m)?.[1])).toBeGreaterThan(3);
    expect(Number(metrics.match(/^atskills_search_index_bytes (\d+)$/m)?.[1])).toBeGreaterThan(0);
  });
});

describe('in-memory search engine while it builds', () => {
  it('answers from Postgres, says so, and pages on with Postgres', async () => {
    const db = await createTestDatabase('search_memory_building');
    try {
      const many: Record<string, string> = {};
      for (let i = 0; i < 12; i++) many[`w${i}/SKILL.md`] = skillMd(`widget-${i}`, `Widget helper ${i}`);
      await seedRepository(db.db, 'w', 'w', many);
      const engine = createMemoryEngine(db.db, createPostgresEngine(db.db), { maxBytes: 2 ** 30 });
      const first = await engine.search(
        'widget',
        {},
        { isAdmin: false, readableNamespaces: [] },
        5,
        undefined,
      );
      expect(first.engine).toEqual({ name: 'postgres', fallback: 'building' });
      expect((await engine.health()).detail).toMatch(/building the in-memory index/);
      await engine.build();
      // A cursor from the building phase keeps going on Postgres; a new search is answered from memory.
      const next = await engine.search(
        'widget',
        {},
        { isAdmin: false, readableNamespaces: [] },
        5,
        first.nextCursor!,
      );
      expect(next.engine).toEqual({ name: 'postgres', fallback: 'building' });
      expect(new Set([...first.hits, ...next.hits].map((h) => h.identity)).size).toBe(10);
      const fresh = await engine.search(
        'widget',
        {},
        { isAdmin: false, readableNamespaces: [] },
        5,
        undefined,
      );
      expect(fresh.engine).toEqual({ name: 'memory' });
      await engine.close();
    } finally {
      await db.drop();
    }
  });

  it('stays off over its memory budget and keeps answering from Postgres', async () => {
    const db = await createTestDatabase('search_memory_budget');
    try {
      await seedRepository(db.db, 'b', 'b', { 'a/SKILL.md': skillMd('alpha', 'Alpha skill') });
      const engine = createMemoryEngine(db.db, createPostgresEngine(db.db), { maxBytes: 10 });
      await engine.build();
      expect(engine.status()).toMatchObject({ ready: false, error: expect.stringMatching(/memory budget/) });
      const page = await engine.search('alpha', {}, { isAdmin: false, readableNamespaces: [] }, 5, undefined);
      expect(page.engine).toEqual({ name: 'postgres', fallback: 'outage' });
      expect(page.hits[0]?.name).toBe('alpha');
      await engine.close();
    } finally {
      await db.drop();
    }
  });
});
