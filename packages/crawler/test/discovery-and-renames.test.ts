// Discovery of a corpus larger than GitHub's 1,000-result code-search cap, renames seen through GitHub's
// redirect during a crawl, and the problems an author sees (line of a YAML error, over K), against the
// GitHub stand-in (which enforces the cap, paging and incomplete_results) and real git.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { currentRepositoryName, repositoryStatus, skills } from '@atskills/db';
import { MENU_CAP } from '@atskills/protocol';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildCorpusRepos,
  corpusReposDir,
  createRepo,
  listCorpusRepos,
} from '../../../test/support/corpus.js';
import type { GithubStandin } from '../../../test/support/github-standin.js';
import { type Crawler, createCrawler } from '../src/crawler.js';
import { GithubClient } from '../src/github/github-client.js';
import { listRepositories } from '../src/jobs/discover.list.js';
import { type CrawlFixture, startCrawlFixture, testLogger } from './crawl-fixture.js';

const skill = (name: string, description: string) =>
  `---\nname: ${name}\ndescription: ${description}\n---\nSteps.\n`;

describe('discovery of a corpus larger than the code-search cap', () => {
  let fx: CrawlFixture;
  let names: string[];

  beforeAll(async () => {
    const reposRoot = await buildCorpusRepos();
    names = await listCorpusRepos();
    fx = await startCrawlFixture('discovery', reposRoot, corpusReposDir);
  }, 300_000);

  afterAll(async () => {
    await fx?.close();
  });

  it('finds every repository, where one query cannot reach past the first 1,000 results', {
    timeout: 240_000,
  }, async () => {
    const search = (page: number) =>
      fetch(`${fx.standin.apiUrl}/search/code?q=filename:SKILL.md&per_page=100&page=${page}`);
    const first = (await (await search(1)).json()) as { total_count: number };
    expect(first.total_count).toBeGreaterThan(1000);
    expect((await search(11)).status).toBe(422);
    const reachable = new Set<string>();
    for (let page = 1; page <= 10; page++) {
      for (const item of (
        (await (await search(page)).json()) as { items: { repository: { full_name: string } }[] }
      ).items)
        reachable.add(item.repository.full_name);
    }
    expect(reachable.size).toBeLessThan(names.length);

    fx.standin.searchIncompleteNext(2);
    const settings = fx.settings();
    const github = new GithubClient({
      baseUrl: settings.githubApiUrl,
      logger: testLogger,
      searchIntervalMs: settings.githubSearchIntervalMs,
    });
    const found = await listRepositories({ db: fx.db.db, github }, { kind: 'code-search' });
    expect(found).toEqual([...names].sort());
    // No part was paged past the cap.
    const pages = fx.standin.apiLog.filter((e) => e.path.startsWith('/search/code?') && e.status === 422);
    expect(pages).toHaveLength(1);
  });
});

describe('renames, problems', () => {
  let root: string;
  let standin: GithubStandin;
  let fx: CrawlFixture;
  let crawler: Crawler;

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), 'atskills-renames-'));
    await createRepo(root, 'acme/old-name', {
      'deploy/SKILL.md': skill('deploy', 'Deploys.'),
      'bad/SKILL.md': '---\nname: bad\ndescription: fine\nkey: [unclosed\n---\nbody\n',
    });
    const many: Record<string, string> = {};
    for (let i = 0; i <= MENU_CAP; i++) many[`pack/s${i}/SKILL.md`] = skill(`s${i}`, `Skill ${i}.`);
    await createRepo(root, 'acme/many', many);
    fx = await startCrawlFixture('renames', root);
    standin = fx.standin;
    crawler = createCrawler({
      db: fx.db.db,
      settings: fx.settings({ CRAWL_CONCURRENCY: 2 }),
      logger: testLogger,
    });
  }, 120_000);

  afterAll(async () => {
    await crawler?.close();
    await fx?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  const crawl = async (repos: string[]) =>
    crawler.waitForRun(await crawler.startRun({ kind: 'repos', source: { kind: 'repos', repos } }), {
      pollMs: 50,
    });

  it('names each problem with its file, its line and the folder over K', async () => {
    await crawl(['acme/old-name', 'acme/many']);
    const status = await repositoryStatus(fx.db.db, 'acme', 'old-name');
    if ('movedTo' in status) throw new Error('unexpected move');
    expect(status.skills).toEqual(['gh:acme/old-name/deploy']);
    expect(status.problems).toContainEqual(
      expect.objectContaining({ path: 'bad/SKILL.md', code: 'invalid-yaml', line: expect.any(Number) }),
    );
    // The parser reports an unclosed `[` where the frontmatter ends: at or after line 4 of the file.
    const bad = status.problems.find((p) => p.path === 'bad/SKILL.md');
    expect(bad!.line).toBeGreaterThanOrEqual(4);
    const many = await repositoryStatus(fx.db.db, 'acme', 'many');
    if ('movedTo' in many) throw new Error('unexpected move');
    expect(many.skills).toHaveLength(MENU_CAP + 1);
    expect(many.problems.map((p) => [p.path, p.code])).toEqual([
      ['', 'over-cap'],
      ['pack', 'over-cap'],
    ]);
  });

  it('keeps GITHUB_SEARCH_INTERVAL_MS between search requests', async () => {
    const intervalMs = 300;
    const github = new GithubClient({
      baseUrl: standin.apiUrl,
      logger: testLogger,
      searchIntervalMs: intervalMs,
    });
    const before = standin.apiLog.length;
    expect(await github.searchSkillRepositories()).toEqual(['acme/many', 'acme/old-name']);
    const searches = standin.apiLog.slice(before).filter((e) => e.path.startsWith('/search/'));
    // Code search, then one repository search per skills topic.
    expect(searches.length).toBeGreaterThanOrEqual(3);
    // The pacer sends each request at least the interval after the last one was sent; the stand-in sees them
    // arrive give or take the socket's latency (295 ms was seen on a busy machine). Unpaced, they come a few ms apart.
    for (let i = 1; i < searches.length; i++)
      expect(searches[i]!.at - searches[i - 1]!.at).toBeGreaterThanOrEqual(intervalMs * 0.75);
  });

  it("follows GitHub's redirect during a crawl: the skills move, the old name redirects", async () => {
    const [before] = await fx.db.db
      .select()
      .from(skills)
      .where(eq(skills.identity, 'gh:acme/old-name/deploy'));
    await standin.renameRepository('acme/old-name', 'acme/new-name');
    const run = await crawl(['acme/old-name']);
    // Nothing was pushed: the move needs no download, the crawl finds the content unchanged.
    expect(run.outcomes).toMatchObject({ unchanged: 1, failed: 0, gone: 0 });
    const [after] = await fx.db.db.select().from(skills).where(eq(skills.id, before!.id));
    expect(after).toMatchObject({
      identity: 'gh:acme/new-name/deploy',
      revision: before!.revision,
      goneAt: null,
    });
    expect(await currentRepositoryName(fx.db.db, 'acme', 'old-name')).toMatchObject({
      owner: 'acme',
      name: 'new-name',
      moved: true,
    });
  });
});
