/**
 * The search-engine contract: every engine (Postgres always; Meilisearch when MEILI_URL is set) must rank,
 * filter, hide private rows and paginate the same way. There is no Meilisearch on this machine, so its run
 * is skipped here rather than faked.
 */
import { randomBytes } from 'node:crypto';
import type { ReadScope } from '@atskills/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import type { SearchEngine, SearchFilters, SearchHit } from '../src/search/engine.js';
import { createMeilisearchEngine } from '../src/search/meilisearch.js';
import { createMemoryEngine } from '../src/search/memory-engine.js';
import { createPostgresEngine } from '../src/search/postgres.js';
import { resolveIdentity } from '../src/services/resolve.js';
import { seedCorpus, seedHubCollection, seedRepository, skillMd } from './support/seed.js';

const ANONYMOUS: ReadScope = { isAdmin: false, readableNamespaces: [] };
const TEAM: ReadScope = { isAdmin: false, readableNamespaces: ['secret'] };

interface EngineUnderTest {
  engine: SearchEngine;
  /** Brings the engine up to date after the database changed. */
  sync(identities?: string[]): Promise<void>;
}

const engines: [string, (db: TestDatabase) => Promise<EngineUnderTest>][] = [
  ['postgres', async (db) => ({ engine: createPostgresEngine(db.db), sync: async () => {} })],
  [
    'memory',
    async (db) => {
      const engine = createMemoryEngine(db.db, createPostgresEngine(db.db), { maxBytes: 2 ** 30 });
      let built = false;
      return {
        engine,
        sync: async () => {
          if (built) return engine.sync();
          built = true;
          return engine.build();
        },
      };
    },
  ],
];
if (process.env.MEILI_URL) {
  engines.push([
    'meilisearch',
    async (db) => {
      const engine = createMeilisearchEngine(db.db, {
        url: process.env.MEILI_URL!,
        ...(process.env.MEILI_MASTER_KEY ? { apiKey: process.env.MEILI_MASTER_KEY } : {}),
        index: `contract_${randomBytes(4).toString('hex')}`,
      });
      return {
        engine,
        sync: async (identities) => {
          if (identities) await engine.index(identities);
          else await engine.rebuild();
        },
      };
    },
  ]);
}

async function seed(db: TestDatabase): Promise<void> {
  await seedCorpus(db.db, ['anthropics/skills', 'hashicorp/agent-skills']);
  await seedRepository(db.db, 'docs', 'tools', {
    'pdf-processing/SKILL.md': skillMd('pdf-processing', 'Extract text and tables from PDF files'),
    'pdf-processing-advanced/SKILL.md': skillMd('pdf-processing-advanced', 'Merge, split and sign documents'),
    'report-writer/SKILL.md': skillMd(
      'report-writer',
      'Write reports',
      '# Reports\n\nExport the report as a PDF at the end.\n',
    ),
  });
  // The same skill in two repositories: identical relevance, so stars decide.
  const same = { 'brand-voice/SKILL.md': skillMd('brand-voice', 'Apply the company brand voice to copy') };
  await seedRepository(db.db, 'small', 'brand', same, { stars: 5 });
  await seedRepository(db.db, 'popular', 'brand', same, { stars: 500 });
  const many: Record<string, string> = {};
  for (let i = 0; i < 45; i++)
    many[`batch/item-${String(i).padStart(2, '0')}/SKILL.md`] = skillMd(
      `item-${i}`,
      `Widget helper number ${i}`,
    );
  await seedRepository(db.db, 'widgets', 'factory', many);
  await seedHubCollection(
    db.db,
    'secret',
    'zebra',
    {
      'zebra-keys/SKILL.md': skillMd('zebra-keys', 'Rotate the zebra keys'),
      'zebra-audit/SKILL.md': skillMd('zebra-audit', 'Audit the zebra'),
    },
    { visibility: 'private' },
  );
  await seedHubCollection(db.db, 'acme', 'playbooks', {
    'zebra-restore/SKILL.md': skillMd('zebra-restore', 'Restore the zebra from backup'),
  });
}

async function allPages(
  engine: SearchEngine,
  q: string,
  filters: SearchFilters,
  scope: ReadScope,
  limit: number,
) {
  const hits: SearchHit[] = [];
  let cursor: string | undefined;
  for (let guard = 0; guard < 100; guard++) {
    const page = await engine.search(q, filters, scope, limit, cursor);
    hits.push(...page.hits);
    if (!page.nextCursor) return hits;
    cursor = page.nextCursor;
  }
  throw new Error('pagination did not end');
}

describe.each(engines)('search engine contract: %s', (_name, make) => {
  let db: TestDatabase;
  let subject: EngineUnderTest;
  const search = (q: string, filters: SearchFilters = {}, scope = ANONYMOUS, limit = 20) =>
    subject.engine.search(q, filters, scope, limit, undefined);

  beforeAll(async () => {
    db = await createTestDatabase('search_contract');
    await seed(db);
    subject = await make(db);
    await subject.sync();
  });
  afterAll(async () => {
    await subject?.engine.close?.();
    await db?.drop();
  });

  it('ranks the exact name first', async () => {
    const page = await search('pdf-processing');
    expect(page.hits[0]?.identity).toBe('gh:docs/tools/pdf-processing');
    expect(page.hits.map((h) => h.identity)).toContain('gh:docs/tools/pdf-processing-advanced');
  });

  it('finds a name from its prefix', async () => {
    const page = await search('pdf-proc');
    expect(
      page.hits
        .slice(0, 2)
        .map((h) => h.identity)
        .sort(),
    ).toEqual(['gh:docs/tools/pdf-processing', 'gh:docs/tools/pdf-processing-advanced']);
    expect((await search('skill-cre')).hits[0]?.identity).toBe('gh:anthropics/skills/skills/skill-creator');
  });

  it('still finds a name with a one-letter typo', async () => {
    expect((await search('pdf-procesing')).hits[0]?.identity).toBe('gh:docs/tools/pdf-processing');
    expect((await search('skill-creater')).hits[0]?.identity).toBe(
      'gh:anthropics/skills/skills/skill-creator',
    );
  });

  it('matches description and body words, names ranking above bodies', async () => {
    const ids = (await search('pdf')).hits.map((h) => h.identity);
    expect(ids).toContain('gh:docs/tools/report-writer');
    expect(ids.indexOf('gh:docs/tools/pdf-processing')).toBeLessThan(
      ids.indexOf('gh:docs/tools/report-writer'),
    );
    expect((await search('tables')).hits.map((h) => h.identity)).toContain('gh:docs/tools/pdf-processing');
  });

  it('breaks ties on popularity', async () => {
    const hits = (await search('brand-voice')).hits.filter((h) => h.name === 'brand-voice');
    expect(hits.map((h) => [h.identity, h.stars])).toEqual([
      ['gh:popular/brand/brand-voice', 500],
      ['gh:small/brand/brand-voice', 5],
    ]);
  });

  it('returns collections (folders of several skills) with their skill count', async () => {
    const page = await search('terraform');
    const folder = page.hits.find((h) => h.identity === 'gh:hashicorp/agent-skills/terraform');
    expect(folder).toMatchObject({ kind: 'collection', name: 'terraform' });
    expect(folder?.skillCount).toBeGreaterThan(5);
    expect(page.hits.some((h) => h.kind === 'skill')).toBe(true);
  });

  it("gives a collection the same revision as its menu (the validating cache's ETag)", async () => {
    const folder = (await search('terraform')).hits.find(
      (h) => h.identity === 'gh:hashicorp/agent-skills/terraform',
    );
    const menu = await resolveIdentity(db.db, ANONYMOUS, 'gh:hashicorp/agent-skills/terraform');
    expect(menu.kind).toBe('menu');
    expect(folder?.revision).toBe(menu.revision);
  });

  it('carries what a result needs: revision, tokens, warnings, flags', async () => {
    const hit = (await search('pdf-processing')).hits[0]!;
    expect(hit).toMatchObject({
      kind: 'skill',
      source: 'gh',
      owner: 'docs',
      container: 'tools',
      path: 'pdf-processing',
    });
    expect(hit.revision).toMatch(/^[0-9a-f]{64}$/);
    expect(hit.descriptionTokens).toBeGreaterThan(3);
    expect(hit.bodyTokens).toBeGreaterThan(3);
    expect(Array.isArray(hit.warnings) && Array.isArray(hit.flags)).toBe(true);
  });

  it('keeps skills without parsable frontmatter (withheld content) out of results', async () => {
    // anthropics/skills' docx/pdf/pptx/xlsx are withheld in the corpus: indexed with a parse error.
    const ids = (await search('pdf', {}, ANONYMOUS, 100)).hits.map((h) => h.identity);
    expect(ids).not.toContain('gh:anthropics/skills/skills/pdf');
  });

  it('shows private results only to callers who may read them, and never counts them', async () => {
    const anonymous = (await search('zebra', {}, ANONYMOUS)).hits.map((h) => h.identity);
    expect(anonymous).toEqual(['hub:acme/playbooks/zebra-restore']);
    const team = (await search('zebra', {}, TEAM)).hits.map((h) => h.identity);
    expect(team).toEqual(
      expect.arrayContaining([
        'hub:secret/zebra',
        'hub:secret/zebra/zebra-keys',
        'hub:acme/playbooks/zebra-restore',
      ]),
    );
    const folder = (await search('zebra', {}, TEAM)).hits.find((h) => h.identity === 'hub:secret/zebra');
    expect(folder?.skillCount).toBe(2);
  });

  it('filters by source, owner, repo and namespace', async () => {
    expect((await search('zebra', { source: 'gh' }, TEAM)).hits).toEqual([]);
    expect((await search('zebra', { namespace: 'acme' }, TEAM)).hits.map((h) => h.identity)).toEqual([
      'hub:acme/playbooks/zebra-restore',
    ]);
    expect((await search('brand-voice', { owner: 'SMALL' })).hits.map((h) => h.identity)).toEqual([
      'gh:small/brand/brand-voice',
    ]);
    const repo = (await search('pdf', { repo: 'tools', owner: 'docs' })).hits;
    expect(repo.length).toBeGreaterThan(0);
    expect(repo.every((h) => h.owner === 'docs' && h.container === 'tools')).toBe(true);
  });

  it('filters by repo given as owner/name, as answers show it, without case', async () => {
    const ids = async (filters: SearchFilters, scope = ANONYMOUS) =>
      (await search('brand-voice', filters, scope)).hits.map((h) => h.identity).sort();
    expect(await ids({ repo: 'brand' })).toEqual([
      'gh:popular/brand/brand-voice',
      'gh:small/brand/brand-voice',
    ]);
    expect(await ids({ repo: 'POPULAR/Brand' })).toEqual(['gh:popular/brand/brand-voice']);
    expect(await ids({ repo: 'popular/brand', owner: 'Popular' })).toEqual(['gh:popular/brand/brand-voice']);
    // An owner filter that names another owner leaves nothing.
    expect(await ids({ repo: 'popular/brand', owner: 'small' })).toEqual([]);
    expect(await ids({ repo: 'nobody/brand' })).toEqual([]);
    // A hub collection is shown as namespace/collection.
    expect((await search('zebra', { repo: 'acme/playbooks' }, TEAM)).hits.map((h) => h.identity)).toEqual([
      'hub:acme/playbooks/zebra-restore',
    ]);
  });

  it('paginates without duplicates or gaps', async () => {
    const whole = (await search('widget helper', {}, ANONYMOUS, 100)).hits.map((h) => h.identity);
    expect(whole.length).toBeGreaterThanOrEqual(45);
    const paged = (await allPages(subject.engine, 'widget helper', {}, ANONYMOUS, 7)).map((h) => h.identity);
    expect(paged).toEqual(whole);
  });

  it('stays stable while the index changes between pages', async () => {
    const first = await subject.engine.search('widget helper', {}, ANONYMOUS, 10, undefined);
    const seen = first.hits.map((h) => h.identity);
    const before = (await search('widget helper', {}, ANONYMOUS, 100)).hits.map((h) => h.identity);
    // New matching rows, some ranking above the cursor and some below it.
    const added = await seedRepository(db.db, 'widgets', 'extra', {
      'widget-helper/SKILL.md': skillMd('widget-helper', 'Widget helper, the exact one'),
      'later/SKILL.md': skillMd('later', 'Widget helper number 999'),
    });
    await subject.sync(added);
    let cursor = first.nextCursor ?? undefined;
    while (cursor) {
      const page = await subject.engine.search('widget helper', {}, ANONYMOUS, 10, cursor);
      seen.push(...page.hits.map((h) => h.identity));
      cursor = page.nextCursor ?? undefined;
    }
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of before) expect(seen).toContain(id);
  });

  it('keeps every earlier result while rows matching the query arrive after each page', async () => {
    // Description matches and body-only matches: rows matching the description come after each page, so
    // the description matches pass a hundred while the pages are read (Postgres then dropped its body arm).
    const parts: Record<string, string> = {};
    for (let i = 0; i < 90; i++)
      parts[`part-${String(i).padStart(2, '0')}/SKILL.md`] = skillMd(`part-${i}`, `Gizmo part ${i}`);
    const manuals: Record<string, string> = {};
    for (let i = 0; i < 6; i++)
      manuals[`manual-${i}/SKILL.md`] = skillMd(
        `manual-${i}`,
        'An operating manual',
        '# Care\n\nOil the gizmo.\n',
      );
    await subject.sync([
      ...(await seedRepository(db.db, 'gizmos', 'catalog', parts)),
      ...(await seedRepository(db.db, 'gizmos', 'manuals', manuals)),
    ]);
    const before = (await search('gizmo', {}, ANONYMOUS, 100)).hits.map((h) => h.identity);
    expect(before).toContain('gh:gizmos/manuals/manual-0');
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 20; page++) {
      const result = await subject.engine.search('gizmo', {}, ANONYMOUS, 20, cursor);
      seen.push(...result.hits.map((h) => h.identity));
      if (!result.nextCursor) break;
      cursor = result.nextCursor;
      const more: Record<string, string> = {};
      for (let i = 0; i < 3; i++)
        more[`extra-${page}-${i}/SKILL.md`] = skillMd(`extra-${page}-${i}`, `Gizmo spare ${page} ${i}`);
      await subject.sync(await seedRepository(db.db, 'gizmos', `spares-${page}`, more));
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(before.filter((id) => !seen.includes(id))).toEqual([]);
  });

  it('refuses malformed and foreign cursors with bad-cursor', async () => {
    const page = await search('widget helper', {}, ANONYMOUS, 5);
    for (const cursor of ['nope', '', 'eyJ4IjoxfQ', `${page.nextCursor}x`]) {
      await expect(
        subject.engine.search('widget helper', {}, ANONYMOUS, 5, cursor || 'e30'),
      ).rejects.toMatchObject({
        code: 'bad-cursor',
      });
    }
    await expect(
      subject.engine.search('other query', {}, ANONYMOUS, 5, page.nextCursor!),
    ).rejects.toMatchObject({
      code: 'bad-cursor',
    });
  });

  it('reports its health', async () => {
    expect((await subject.engine.health()).ok).toBe(true);
  });
});
