/**
 * Indexing people can see and trigger (SPEC 2.6), end to end: the hub app with a real in-process crawler
 * over the GitHub stand-in (real git), a database of its own. Status, index requests (validation,
 * coalescing, the per-caller budget), on-demand gh: reads, and nothing crawled twice.
 */
import { crawlReports, indexRequests, repositories } from '@atskills/db';
import { eq, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitToRepo } from '../../../test/support/corpus.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { type CrawlingHub, skillFile, startCrawlingHub, until } from './support/crawling-hub.js';

let hub: CrawlingHub;
let app: FastifyInstance;
let db: CrawlingHub['db'];
let standin: CrawlingHub['standin'];
let crawler: CrawlingHub['crawler'];
let lateWorkDir: string;

beforeAll(async () => {
  hub = await startCrawlingHub(
    'indexing',
    {
      'acme/kit': {
        'deploy/SKILL.md': skillFile('deploy', 'Deploys the service.'),
        'broken/SKILL.md': '---\nname: broken\ndescription: [unclosed\n---\nbody\n',
        'nameless/SKILL.md': '---\ndescription: No name here.\n---\nbody\n',
      },
      'acme/empty': { 'README.md': '# nothing to see\n' },
      'acme/late': { 'tools/lint/SKILL.md': skillFile('lint', 'Lints the code.') },
      'acme/busy': { 'SKILL.md': skillFile('busy', 'A popular skill.') },
    },
    { INDEX_REQUESTS_PER_MINUTE: '100000' },
  );
  ({ app, db, standin, crawler } = hub);
  lateWorkDir = hub.workDirs.get('acme/late')!;
}, 120_000);

afterAll(async () => {
  await hub?.close();
});

async function status(fullName: string) {
  return (await app.inject({ url: `/v1/repos/${fullName}` })).json();
}

/** Polls the status until it is settled (indexed or failed). */
const settled = (fullName: string) =>
  until(
    () => status(fullName),
    (s) => s.status === 'indexed' || s.status === 'failed',
  );

const requestIndex = (repo: unknown, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: '/v1/index-requests', payload: { repo }, headers });

describe('repository status', () => {
  it('says not-indexed for a repository the hub never crawled, and refuses names GitHub refuses', async () => {
    const res = await app.inject({ url: '/v1/repos/acme/kit' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      owner: 'acme',
      name: 'kit',
      status: 'not-indexed',
      skills: [],
      problems: [],
      lastCrawledAt: null,
    });
    for (const url of ['/v1/repos/-acme/kit', '/v1/repos/acme/a%20b', `/v1/repos/${'a'.repeat(40)}/kit`]) {
      const bad = await app.inject({ url });
      expect(bad.statusCode, url).toBe(400);
      expect(bad.json().code, url).toBe('invalid-repository');
    }
  });
});

describe('index requests', () => {
  it('answers 202 with the status URL, crawls through the queue, and names every problem', async () => {
    const res = await requestIndex('acme/kit');
    expect(res.statusCode).toBe(202);
    const body = res.json();
    expect(body).toMatchObject({ repo: 'acme/kit', status: 'queued', started: true });
    expect(body.statusUrl).toMatch(/\/v1\/repos\/acme\/kit$/);
    expect(res.headers.location).toBe(body.statusUrl);
    const done = await settled('acme/kit');
    expect(done.status).toBe('indexed');
    expect(done.skills).toEqual(['gh:acme/kit/deploy']);
    // A skill's page on GitHub, pasted as it is, asks for its repository.
    const fromPage = await requestIndex('https://github.com/acme/kit/tree/main/deploy');
    expect(fromPage.statusCode, fromPage.body).toBe(202);
    expect(fromPage.json()).toMatchObject({ repo: 'acme/kit' });
    expect(done.headRevision).toMatch(/^[0-9a-f]{40}$/);
    expect(new Date(done.lastCrawledAt).toString()).not.toBe('Invalid Date');
    const byPath = new Map(done.problems.map((p: { path: string }) => [p.path, p]));
    expect(byPath.get('broken/SKILL.md')).toMatchObject({ code: 'invalid-yaml' });
    expect(byPath.get('nameless/SKILL.md')).toMatchObject({ code: 'missing-name' });
    // The page shows the same, and each skill page links to it.
    const page = await app.inject({ url: '/r/acme/kit' });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('gh:acme/kit/deploy');
    expect(page.body).toContain('broken');
    const skillPage = await app.inject({ url: '/s/gh:acme/kit/deploy' });
    expect(skillPage.body).toContain('href="/r/acme/kit"');
  });

  it('ends a repository that does not exist as failed, and one without SKILL.md as indexed with zero skills', async () => {
    expect((await requestIndex('acme/nothing-here')).statusCode).toBe(202);
    expect((await requestIndex('acme/empty')).statusCode).toBe(202);
    const missing = await settled('acme/nothing-here');
    expect(missing.status).toBe('failed');
    expect(missing.problems).toEqual([expect.objectContaining({ code: 'repository-not-found' })]);
    const empty = await settled('acme/empty');
    expect(empty).toMatchObject({ status: 'indexed', skills: [] });
    expect(empty.problems).toEqual([expect.objectContaining({ code: 'no-skills' })]);
  });

  it('refuses bad input with its exact status before any GitHub request', async () => {
    const before = standin.apiLog.length;
    const cases: [unknown, number, string][] = [
      ['acme/', 400, 'invalid-repository'],
      ['acme', 400, 'invalid-repository'],
      ['-acme/kit', 400, 'invalid-repository'],
      ['acme/bad name', 400, 'invalid-repository'],
      ['acme/..', 400, 'invalid-repository'],
      [42, 400, 'bad-request'],
    ];
    for (const [repo, code, problem] of cases) {
      const res = await requestIndex(repo);
      expect(res.statusCode, String(repo)).toBe(code);
      expect(res.json().code, String(repo)).toBe(problem);
    }
    const notJson = await app.inject({
      method: 'POST',
      url: '/v1/index-requests',
      headers: { 'content-type': 'application/json' },
      payload: '{"repo": ',
    });
    expect(notJson.statusCode).toBe(400);
    expect(notJson.headers['content-type']).toContain('application/problem+json');
    expect(standin.apiLog.length).toBe(before);
  });

  it('coalesces 1,000 concurrent requests for one repository into one crawl', async () => {
    const answers = await Promise.all(Array.from({ length: 1000 }, () => requestIndex('acme/busy')));
    // On a busy machine the hub may shed part of the burst (503 unavailable with Retry-After, after 5 s
    // waiting for a database connection); nothing else is acceptable, and every accepted one joins the one crawl.
    const codes = answers.map((a) => a.statusCode);
    expect(codes.filter((c) => c !== 202 && c !== 503)).toEqual([]);
    expect(codes.filter((c) => c === 202).length).toBeGreaterThan(0);
    for (const shed of answers.filter((a) => a.statusCode === 503)) {
      expect(shed.json().code).toBe('unavailable');
      expect(shed.headers['retry-after']).toBeDefined();
    }
    expect(answers.filter((a) => a.json().started)).toHaveLength(1);
    await settled('acme/busy');
    const [repo] = await db.db.select().from(repositories).where(eq(repositories.name, 'busy'));
    const reports = await db.db.select().from(crawlReports).where(eq(crawlReports.repositoryId, repo!.id));
    expect(reports).toHaveLength(1);
    const requests = await db.db
      .select()
      .from(indexRequests)
      .where(sql`lower(${indexRequests.name}) = 'busy'`);
    expect(requests).toHaveLength(1);
    expect(requests[0]!.coalesced).toBe(codes.filter((c) => c === 202).length - 1);
    const metadataCalls = standin.apiLog.filter((e) => e.path.startsWith('/repos/acme/busy'));
    expect(metadataCalls).toHaveLength(1);
  });

  it('limits each caller, not everyone', async () => {
    const limited = await buildApp(loadConfig({ LOG_LEVEL: 'silent', INDEX_REQUESTS_PER_MINUTE: '2' }), {
      database: db,
      queue: crawler,
    });
    try {
      const ask = (ip: string) =>
        limited.inject({
          method: 'POST',
          url: '/v1/index-requests',
          payload: { repo: 'acme/kit' },
          remoteAddress: ip,
        });
      expect((await ask('10.0.0.1')).statusCode).toBe(202);
      expect((await ask('10.0.0.1')).statusCode).toBe(202);
      const third = await ask('10.0.0.1');
      expect(third.statusCode).toBe(429);
      expect(third.json().code).toBe('rate-limited');
      expect(Number(third.headers['retry-after'])).toBeGreaterThan(0);
      expect((await ask('10.0.0.2')).statusCode).toBe(202);
    } finally {
      await limited.close();
    }
    await settled('acme/kit');
  });
});

describe('on-demand gh:', () => {
  it('answers 404 with Retry-After and the status URL, indexes the repository, then serves it', async () => {
    const first = await app.inject({ url: '/v1/skills/gh:acme/late/tools/lint' });
    expect(first.statusCode).toBe(404);
    expect(first.headers['retry-after']).toBe('5');
    expect(first.json()).toMatchObject({ code: 'not-found', indexStatus: 'queued' });
    expect(first.json().statusUrl).toMatch(/\/v1\/repos\/acme\/late$/);
    // Every read route of the repository says the same while it is queued, and starts nothing more.
    for (const url of ['/v1/archive/gh:acme/late/tools/lint', '/api/skills/gh:acme/late/tools/lint']) {
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBe(404);
      expect(res.headers['retry-after'], url).toBe('5');
    }
    const head = await app.inject({ method: 'HEAD', url: '/v1/skills/gh:acme/late/tools/lint' });
    expect(head.statusCode).toBe(404);
    await settled('acme/late');
    const served = await app.inject({ url: '/v1/skills/gh:acme/late/tools/lint' });
    expect(served.statusCode).toBe(200);
    expect(served.json().name).toBe('lint');
    // An indexed repository without that path is a plain 404.
    const missing = await app.inject({ url: '/v1/skills/gh:acme/late/nope' });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['retry-after']).toBeUndefined();
    const requests = await db.db
      .select()
      .from(indexRequests)
      .where(sql`lower(${indexRequests.name}) = 'late'`);
    expect(requests).toHaveLength(1);
  });

  it('never contacts GitHub for a name GitHub refuses', async () => {
    const before = standin.apiLog.length;
    const res = await app.inject({ url: '/v1/skills/gh:acme/has%20space/x' });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.headers['retry-after']).toBeUndefined();
    expect(standin.apiLog.length).toBe(before);
  });

  it('picks up a push: a re-requested repository is re-crawled', async () => {
    await commitToRepo(lateWorkDir, { 'tools/fmt/SKILL.md': skillFile('fmt', 'Formats the code.') });
    expect((await requestIndex('acme/late')).statusCode).toBe(202);
    await settled('acme/late');
    const s = await status('acme/late');
    expect(s.skills).toEqual(['gh:acme/late/tools/fmt', 'gh:acme/late/tools/lint']);
  });
});
