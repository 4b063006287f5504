// Crawls the whole shared corpus through BullMQ against the GitHub stand-in and checks the index against
// the leaf rule applied to each repository's tree.tsv; then a second crawl with nothing changed.

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { crawlReportsOfRun, skills } from '@atskills/db';
import { findSkillFolders, type TreeEntry, tryParseSkillMarkdown } from '@atskills/protocol';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildCorpusRepos,
  corpusReposDir,
  listCorpusRepos,
  readCorpusMeta,
  readCorpusTree,
} from '../../../test/support/corpus.js';
import { dropQueuePrefix, redisUrl, uniqueQueuePrefix } from '../../../test/support/redis.js';
import { type Crawler, createCrawler } from '../src/crawler.js';
import { type CrawlFixture, startCrawlFixture, testLogger } from './crawl-fixture.js';

let fx: CrawlFixture;
let crawler: Crawler;
let names: string[];
let redis: string;
const prefix = uniqueQueuePrefix('corpus');
let firstRun: Awaited<ReturnType<Crawler['waitForRun']>>;

/** Folders of SKILL.md files whose bytes the corpus withholds (placeholders in the rebuilt repos). */
function withheldFolders(meta: Awaited<ReturnType<typeof readCorpusMeta>>): Set<string> {
  const withheld = meta.notes?.withheld_restrictive_license as unknown as { paths?: string[] } | undefined;
  return new Set(
    (withheld?.paths ?? [])
      .filter((p) => p.endsWith('/SKILL.md'))
      .map((p) => p.slice(0, -'/SKILL.md'.length)),
  );
}

beforeAll(async () => {
  const reposRoot = await buildCorpusRepos();
  names = await listCorpusRepos();
  redis = await redisUrl();
  fx = await startCrawlFixture('corpus', reposRoot, corpusReposDir);
  crawler = createCrawler({
    db: fx.db.db,
    settings: fx.settings({ REDIS_URL: redis, CRAWL_QUEUE_PREFIX: prefix, CRAWL_CONCURRENCY: 4 }),
    logger: testLogger,
  });
  expect(crawler.mode).toBe('bullmq');
  fx.standin.git.resetLog();
  const runId = await crawler.startRun({ kind: 'repos-file', source: { kind: 'repos', repos: names } });
  firstRun = await crawler.waitForRun(runId, { pollMs: 200 });
}, 540_000);

afterAll(async () => {
  await crawler?.close();
  await fx?.close();
  await dropQueuePrefix(redis, prefix);
});

describe('crawling the shared corpus', () => {
  it('indexes every repository', () => {
    expect(firstRun.status).toBe('finished');
    expect(firstRun.repositoriesDone).toBe(names.length);
    expect(firstRun.outcomes).toMatchObject({ indexed: names.length, failed: 0, gone: 0 });
  });

  it('leaves the search statistics fresh when the run finishes (no wait for autovacuum)', async () => {
    // Manual ANALYZE only: autovacuum's own runs show in last_autoanalyze instead.
    const analyzed = async () => {
      const result = await fx.db.db.execute(
        sql`select last_analyze from pg_stat_user_tables where relname = 'skills'`,
      );
      return (result as { rows: { last_analyze: Date | null }[] }).rows[0]?.last_analyze ?? null;
    };
    await expect.poll(analyzed, { timeout: 10_000 }).not.toBeNull();
    const pending = await fx.db.db.execute(
      sql`select coalesce(sum(gin_clean_pending_list(i.indexrelid::regclass)), 0)::int as pages
          from pg_index i join pg_class c on c.oid = i.indexrelid join pg_am a on a.oid = c.relam
          where a.amname = 'gin' and i.indrelid = 'skills'::regclass`,
    );
    expect((pending as { rows: { pages: number }[] }).rows[0]?.pages).toBe(0);
  });

  it('indexes exactly the skills the leaf rule finds in each tree.tsv', async () => {
    const rows = await fx.db.db.select().from(skills);
    let total = 0;
    for (const name of names) {
      const [owner, repo] = name.split('/');
      const tree = await readCorpusTree(name);
      const entries: TreeEntry[] = tree.map((t) => ({
        path: t.path,
        type: t.mode === '120000' ? 'symlink' : t.mode === '160000' ? 'submodule' : 'file',
        sha: t.sha,
        mode: t.mode,
      }));
      const expected = findSkillFolders(entries);
      const indexed = rows
        .filter((r) => r.owner === owner && r.container === repo && r.goneAt === null)
        .map((r) => r.path)
        .sort();
      expect(indexed, name).toEqual([...expected].sort());
      total += expected.length;
    }
    expect(rows.length).toBe(total);
    expect(firstRun.skillsFound).toBe(total);
  });

  it('records frontmatter errors, keeps them out of search, and reports withheld folders as content unavailable', async () => {
    const rows = await fx.db.db.select().from(skills);
    let withheldSeen = 0;
    for (const name of names) {
      const [owner, repo] = name.split('/');
      const meta = await readCorpusMeta(name);
      const withheld = withheldFolders(meta);
      for (const row of rows.filter((r) => r.owner === owner && r.container === repo)) {
        const file = path.join(corpusReposDir, name, 'files', row.path, 'SKILL.md');
        if (withheld.has(row.path)) {
          // Content unavailable: the rebuilt repository holds placeholder bytes, so no frontmatter.
          withheldSeen++;
          expect(row.parseError?.code, `${name}/${row.path}`).toBe('no-frontmatter');
          continue;
        }
        expect(existsSync(file), file).toBe(true);
        const folder = path.posix.basename(row.path) || repo!;
        const parsed = tryParseSkillMarkdown(readFileSync(file), folder);
        if (parsed.ok) {
          expect(row.parseError, `${name}/${row.path}`).toBeNull();
          expect(row.name).toBe(parsed.doc.name);
          expect(row.description).toBe(parsed.doc.description);
          expect(row.warnings).toEqual(parsed.doc.warnings);
        } else {
          expect(row.parseError?.code, `${name}/${row.path}`).toBe(parsed.error.code);
          // Out of search by its parse error; it still resolves as the client reads it over git: named by
          // its folder, the whole file its body (none when the file is no text).
          const text =
            parsed.error.code === 'not-utf8' ? '' : readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
          expect([row.name, row.description, row.body], `${name}/${row.path}`).toEqual([folder, '', text]);
        }
      }
    }
    expect(withheldSeen).toBe(13);
    const byCode = (code: string) => rows.filter((r) => r.parseError?.code === code);
    expect(byCode('no-frontmatter').filter((r) => r.owner === '24kchengYe')).toHaveLength(68);
    expect(byCode('invalid-yaml').map((r) => r.owner)).toContain('jaredrhod');
  });

  it('reports wrong-case skill.md, stores files content-addressed and records bytes', async () => {
    const reports = await crawlReportsOfRun(fx.db.db, firstRun.id);
    const legal = reports.find((r) => r.name === 'claude-legal-skill')!.report;
    expect(legal.warnings.map((w) => w.code)).toContain('wrong-case-skill-file');
    expect(reports.every((r) => r.report.bytesDownloaded > 0)).toBe(true);
    const rows = await fx.db.db.select().from(skills);
    // The 27 nested SKILL.md of knowledge-work-plugins belong to their enclosing skills, files included.
    const nested = rows
      .filter((r) => r.container === 'knowledge-work-plugins')
      .flatMap((r) => r.files.filter((f) => f.path.endsWith('/SKILL.md')));
    expect(nested).toHaveLength(27);
    expect(rows.every((r) => r.files.some((f) => f.path === 'SKILL.md'))).toBe(true);
  });

  it('costs one conditional metadata request per repository on a second crawl with nothing changed', async () => {
    fx.standin.git.resetLog();
    const apiBefore = fx.standin.apiLog.length;
    const runId = await crawler.startRun({ kind: 'repos-file', source: { kind: 'repos', repos: names } });
    const second = await crawler.waitForRun(runId, { pollMs: 200 });
    expect(second.outcomes).toMatchObject({ unchanged: names.length, indexed: 0, failed: 0 });
    expect(second.skillsFound).toBe(firstRun.skillsFound);
    expect(second.bytesDownloaded).toBe(0);
    // Repository metadata was revalidated with the stored ETag: every answer a 304, so git is not asked.
    const api = fx.standin.apiLog.slice(apiBefore).filter((e) => e.path.startsWith('/repos'));
    expect(api).toHaveLength(names.length);
    expect(api.every((e) => e.status === 304)).toBe(true);
    expect(fx.standin.git.log).toEqual([]);
  });
});
