// The crawler's command line as an operator and an author use it: `crawl` names every repository that
// failed or does not exist with its reason and exits non-zero; `status --repo` shows one repository's
// index status, skills and problems. Real processes, the GitHub stand-in and a database of their own.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { crawlRuns } from '@atskills/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CrawlFixture, startCrawlFixture } from '../../../packages/crawler/test/crawl-fixture.js';
import { createRepo, repoRoot } from '../../../test/support/corpus.js';
import { unusedPort } from '../../../test/support/ports.js';

const run = promisify(execFile);
let root: string;
let fx: CrawlFixture;

async function crawler(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout } = await run(
      process.execPath,
      [
        '--import',
        'tsx',
        '--conditions=@atskills/source',
        path.join(repoRoot, 'apps/crawler/src/main.ts'),
        ...args,
      ],
      {
        cwd: repoRoot,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          DATABASE_URL: fx.db.url,
          GITHUB_API_URL: fx.standin.apiUrl,
          GIT_BASE_URL: fx.standin.gitUrl,
          LOG_LEVEL: 'silent',
          ...env,
        },
        timeout: 120_000,
      },
    );
    return { code: 0, stdout, stderr: '' };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'atskills-cli-output-'));
  await createRepo(root, 'acme/ok', {
    'deploy/SKILL.md': '---\nname: deploy\ndescription: Deploys.\n---\nSteps.\n',
    'broken/SKILL.md': '---\nname: broken\n---\nno description\n',
  });
  fx = await startCrawlFixture('cli_output', root);
}, 60_000);

afterAll(async () => {
  await fx?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

describe('crawler command line', () => {
  it('says which database it cannot reach and what to do, never the SQL', { timeout: 120_000 }, async () => {
    const url = `postgres://postgres:secret-pw@127.0.0.1:${await unusedPort()}/nowhere`;
    const result = await crawler(['status'], { DATABASE_URL: url });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^crawler: cannot reach the database at postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/nowhere \(.*ECONNREFUSED.*\); check that it runs and DATABASE_URL is right\.\n$/,
    );
    expect(result.stderr).not.toMatch(/select|secret-pw/i);
  });

  it('says in one line that Redis does not answer, naming REDIS_URL, and starts no run', {
    timeout: 120_000,
  }, async () => {
    const port = await unusedPort();
    const runsBefore = await fx.db.db.select().from(crawlRuns);
    const result = await crawler(['crawl', '--repos', 'gh:acme/ok', '--enqueue-only'], {
      REDIS_URL: `redis://:redis-pw@127.0.0.1:${port}`,
      LOG_LEVEL: 'info',
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      new RegExp(
        `^crawler: cannot reach Redis at REDIS_URL redis://:\\*\\*\\*@127\\.0\\.0\\.1:${port} \\(.*ECONNREFUSED 127\\.0\\.0\\.1:${port}.*\\); check that it runs and REDIS_URL is right.*\\n$`,
      ),
    );
    expect(result.stderr).not.toMatch(/redis-pw|"stack"/);
    expect(await fx.db.db.select().from(crawlRuns)).toHaveLength(runsBefore.length);
  });

  it('crawl names a repository that does not exist and exits 1', { timeout: 180_000 }, async () => {
    const result = await crawler(['crawl', '--repos', 'gh:acme/ok,gh:acme/missing']);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^gone acme\/missing: repository-not-found: /m);
    expect(result.stdout).not.toMatch(/acme\/ok:/);
  });

  it('status --repo shows the status, the listed skills and each problem', { timeout: 120_000 }, async () => {
    // As `npm run crawl -- status --repo owner/name` runs it.
    const ok = await crawler(['crawl', 'status', '--repo', 'acme/ok']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('acme/ok: indexed');
    expect(ok.stdout).toContain('gh:acme/ok/deploy');
    expect(ok.stdout).toMatch(/broken\/SKILL\.md missing-description: /);
    const missing = await crawler(['status', '--repo', 'gh:acme/missing']);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toMatch(/acme\/missing: failed[\s\S]*repository-not-found/);
  });
});
