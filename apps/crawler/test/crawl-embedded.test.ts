// `npm run crawl` on the embedded default (issue 27): no DATABASE_URL, so the index is the embedded database
// a running hub holds. Without a hub the command says what to do; with one, the hub runs the crawl on its own
// queue, the command shows the hub's progress and result, and the skills are searchable at once. The hub and
// the command are real processes (`server.ts`, `main.ts crawl`), GitHub is the stand-in.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRepo, repoRoot } from '../../../test/support/corpus.js';
import { type GithubStandin, startGithubStandin } from '../../../test/support/github-standin.js';
import {
  embeddedHubEnv,
  type HubProcess,
  startHubProcess,
  stopHubProcess,
} from '../../../test/support/hub-process.js';

const run = promisify(execFile);
let root: string;
let dataDir: string;
let standin: GithubStandin;
let hub: HubProcess | undefined;

// The environment of a fresh clone's `npm start` and `npm run crawl`: no server database, Redis or Meilisearch.
const env = () =>
  embeddedHubEnv(dataDir, {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    GITHUB_API_URL: standin.apiUrl,
    GIT_BASE_URL: standin.gitUrl,
    RECRAWL_TICK_MS: '0',
  });

async function crawl(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(
      process.execPath,
      ['--import', 'tsx', '--conditions=@atskills/source', 'apps/crawler/src/main.ts', 'crawl', ...args],
      { cwd: repoRoot, env: env(), timeout: 120_000 },
    );
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'atskills-crawl-embedded-'));
  dataDir = path.join(root, '.data');
  await createRepo(path.join(root, 'repos'), 'acme/tools', {
    'deploy/SKILL.md': '---\nname: deploy-orbit\ndescription: Deploys services to orbit.\n---\nSteps.\n',
    'lint/SKILL.md': '---\nname: lint-orbit\ndescription: Lints orbit configuration.\n---\nSteps.\n',
  });
  await createRepo(path.join(root, 'repos'), 'acme/slow', {
    'SKILL.md': '---\nname: slow\ndescription: Served by a git server that hangs.\n---\nSteps.\n',
  });
  standin = await startGithubStandin({ reposRoot: path.join(root, 'repos') });
}, 60_000);

afterAll(async () => {
  await stopHubProcess(hub);
  await standin?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

describe('npm run crawl on the embedded default', () => {
  it('says how to start a hub when none runs, and exits non-zero', { timeout: 120_000 }, async () => {
    const result = await crawl(['--repos', 'gh:acme/tools']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `No hub is running on the embedded database in ${path.join(dataDir, 'db')}`,
    );
    expect(result.stderr).toContain('npm start');
    expect(result.stderr).not.toContain('DATABASE_URL is not set');
  });

  it('has the running hub crawl, reports the result, and the skills are searchable', {
    timeout: 300_000,
  }, async () => {
    hub = await startHubProcess(env());
    const result = await crawl(['--repos', 'gh:acme/tools,gh:acme/missing']);
    // The missing repository is named with its reason, as when the command crawls by itself.
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^run \d+ \w+ in [\d.]+s: repositories 2\/2 · skills 2 /m);
    expect(result.stdout).toMatch(/^outcomes: .*indexed 1/m);
    expect(result.stdout).toMatch(/^gone acme\/missing: repository-not-found: /m);
    // Progress went to stderr (one line per change when it is not a terminal).
    expect(result.stderr).toMatch(/repositories \d\/2/);

    // The hub's in-memory index follows its own writes.
    let names: string[] = [];
    for (let attempt = 0; attempt < 50 && names.length < 2; attempt++) {
      const res = await fetch(`${hub.url}/v1/search?q=orbit`);
      const body = (await res.json()) as { results: { name: string }[] };
      names = body.results.map((r) => r.name).sort();
      if (names.length < 2) await new Promise((r) => setTimeout(r, 200));
    }
    expect(names).toEqual(['deploy-orbit', 'lint-orbit']);
  });

  it('--enqueue-only leaves the run to the hub and answers with its id', { timeout: 120_000 }, async () => {
    const result = await crawl(['--repos', 'gh:acme/tools', '--enqueue-only']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^run \d+ enqueued on the running hub$/m);
  });

  it('status --repo reads one repository through the running hub', { timeout: 120_000 }, async () => {
    // As `npm run crawl -- status --repo owner/name` runs it, with no DATABASE_URL.
    const result = await crawl(['status', '--repo', 'acme/tools']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('acme/tools: indexed');
    expect(result.stdout).toContain('gh:acme/tools/deploy');
  });

  // Last: the hub is killed.
  it('says the hub stopped when it dies mid-crawl, not that a database is unreachable', {
    timeout: 120_000,
  }, async () => {
    standin.setGitFault('acme/slow', { kind: 'hang' });
    const running = crawl(['--repos', 'gh:acme/slow']);
    // The job has GitHub's answer, so its git requests (which never end) come next.
    for (let i = 0; i < 600 && !standin.apiLog.some((e) => e.path.includes('acme/slow')); i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    hub!.child.kill('SIGKILL');
    await hub!.exited;
    const result = await running;
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^crawler: the hub \(`npm start`\) stopped before crawl run \d+ finished \(/m,
    );
    expect(result.stderr).not.toMatch(/DATABASE_URL|cannot reach the database/);
  });
});
