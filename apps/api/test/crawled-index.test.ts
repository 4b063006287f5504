/**
 * The API over an index the real crawler built: shared-corpus repositories served by the GitHub stand-in,
 * crawled in-process, then searched, resolved, archived and fetched through `atskills get` with the
 * gh: mirror. (The other API tests seed rows directly, which is faster; this one proves both agree.)
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createCrawler, settingsWith } from '@atskills/crawler';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliCaptured } from '../../../test/support/cli.js';
import { buildCorpusRepos, corpusReposDir } from '../../../test/support/corpus.js';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { type GithubStandin, startGithubStandin } from '../../../test/support/github-standin.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createToken, createUser, OPERATOR } from '../src/services/auth/accounts.js';
import { decideReport } from '../src/services/safety-reports.js';

const REPOS = ['anthropics/skills', 'hashicorp/agent-skills'];

let db: TestDatabase;
let standin: GithubStandin;
let app: Awaited<ReturnType<typeof buildApp>>;
let dir: string;

beforeAll(async () => {
  const reposRoot = await buildCorpusRepos();
  [db, standin] = await Promise.all([
    createTestDatabase('crawled_index'),
    startGithubStandin({ reposRoot, corpusDir: corpusReposDir }),
  ]);
  const crawler = createCrawler({
    db: db.db,
    settings: settingsWith({
      GITHUB_API_URL: standin.apiUrl,
      GIT_BASE_URL: standin.gitUrl,
      DATABASE_URL: db.url,
    }),
    logger: pino({ level: 'error' }),
  });
  try {
    const runId = await crawler.startRun({ kind: 'repos', source: { kind: 'repos', repos: REPOS } });
    const run = await crawler.waitForRun(runId, { pollMs: 100 });
    expect(run.status).toBe('finished');
  } finally {
    await crawler.close();
  }
  app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', SEARCH_ENGINE: 'postgres' }), { database: db });
  await app.listen({ host: '127.0.0.1', port: 0 });
  dir = await mkdtemp(path.join(tmpdir(), 'atskills-crawled-'));
}, 300_000);

afterAll(async () => {
  await app?.close();
  await standin?.close();
  await db?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the API over a crawled index', () => {
  it('searches crawled skills and folders', async () => {
    const skill = (await app.inject({ url: '/search?q=skill-creator' })).json();
    expect(skill.results[0].identity).toBe('gh:anthropics/skills/skills/skill-creator');
    const folder = (await app.inject({ url: '/search?q=terraform' })).json();
    expect(folder.results.some((r: { identity: string; kind: string }) => r.kind === 'collection')).toBe(
      true,
    );
  });

  it('serves a crawled skill whose files all verify in its archive', async () => {
    const res = await app.inject({ url: '/v1/skills/gh:anthropics/skills/skills/skill-creator' });
    expect(res.statusCode).toBe(200);
    const skill = res.json();
    expect(skill.files.length).toBeGreaterThan(0);
    const archive = await app.inject({
      url: `/v1/archive/gh:anthropics/skills/skills/skill-creator?rev=${skill.revision}`,
    });
    expect(archive.statusCode).toBe(200);
    expect(archive.headers['content-digest']).toBe(
      `sha-256=:${createHash('sha256').update(archive.rawPayload).digest('base64')}:`,
    );
    const md = await app.inject({ url: '/v1/files/gh:anthropics/skills/skills/skill-creator?path=SKILL.md' });
    expect(createHash('sha256').update(md.rawPayload).digest('hex')).toBe(
      skill.files.find((f: { path: string }) => f.path === 'SKILL.md').sha256,
    );
  });

  it('answers a withheld (unparsable) skill as a skill with its parse error as a warning', async () => {
    const res = await app.inject({ url: '/v1/skills/gh:anthropics/skills/skills/pdf' });
    expect(res.statusCode).toBe(200);
    expect(res.json().warnings.some((w: string) => w.startsWith('parse-error'))).toBe(true);
  });

  it('resolves crawled gh: skills for atskills through the mirror, then 304', async () => {
    const env = {
      PATH: process.env.PATH,
      HOME: dir,
      XDG_CONFIG_HOME: path.join(dir, 'config'),
      ATSKILLS_CACHE: path.join(dir, 'cache'),
      ATSKILLS_HUB: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
      ATSKILLS_GH_VIA_HUB: '1',
      ATSKILLS_GIT_BASE: 'http://127.0.0.1:1',
    };
    const first = await runCliCaptured(['get', 'gh:anthropics/skills/skills/skill-creator'], {
      cwd: dir,
      env,
    });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout.length).toBeGreaterThan(100);
    const statuses: number[] = [];
    app.server.on('request', (_req, res) => res.on('finish', () => statuses.push(res.statusCode)));
    const second = await runCliCaptured(['get', 'gh:anthropics/skills/skills/skill-creator'], {
      cwd: dir,
      env,
    });
    expect(second.code, second.stderr).toBe(0);
    expect(statuses).toEqual([304]);
  });

  it('outdated compares a gh: copy saved over git with the crawled index by the folder tree', async () => {
    const project = path.join(dir, 'outdated-project');
    const env = {
      PATH: process.env.PATH,
      HOME: dir,
      XDG_CONFIG_HOME: path.join(dir, 'config'),
      ATSKILLS_CACHE: path.join(dir, 'git-cache'),
      ATSKILLS_HUB: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
      ATSKILLS_GIT_BASE: standin.gitUrl,
    };
    await mkdir(path.join(project, '.atskills'), { recursive: true });
    const saved = await runCliCaptured(['save', 'gh:anthropics/skills/skills/skill-creator'], {
      cwd: project,
      env,
    });
    expect(saved.code, saved.stderr).toBe(0);
    const outdated = await runCliCaptured(['outdated', '--json'], { cwd: project, env });
    expect(outdated.code, outdated.stdout).toBe(0);
    // The client's content key (git sub-tree sha) is the crawler's revision: the hub answers, no git call.
    expect(JSON.parse(outdated.stdout).items).toEqual([
      expect.objectContaining({
        identity: 'gh:anthropics/skills/skills/skill-creator',
        status: 'up-to-date',
        via: 'hub',
      }),
    ]);
  });
});

describe('a gh: skill read over git that the hub judged malicious', () => {
  const judged = 'gh:hashicorp/agent-skills/packer/builders/skills/aws-ami-builder';
  const folder = 'gh:hashicorp/agent-skills/packer/builders/skills/';

  it('is refused on its first read, by install, and as one of a folder line (SPEC 2.8)', async () => {
    const op = { authority: OPERATOR, now: new Date(), requestId: 'test' };
    await createUser(db.db, { name: 'reporter' }, op);
    const token = (await createToken(db.db, { user: 'reporter', scopes: ['read'] }, op)).token;
    const report = await app.inject({
      method: 'POST',
      url: `/v1/skills/${judged}/reports`,
      headers: { authorization: `Bearer ${token}` },
      payload: { kind: 'malicious', note: 'exfiltrates keys' },
    });
    expect(report.statusCode, report.body).toBeLessThan(300);
    await decideReport(db.db, (report.json() as { id: number }).id, 'accept', 'confirmed', op);

    // Over git, a cache that has never seen it: git knows no verdict, the hub that indexed it does.
    const project = path.join(dir, 'judged-project');
    await mkdir(project, { recursive: true });
    const env = {
      PATH: process.env.PATH,
      HOME: dir,
      XDG_CONFIG_HOME: path.join(dir, 'config'),
      ATSKILLS_CACHE: path.join(dir, 'judged-cache'),
      ATSKILLS_HUB: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`,
      ATSKILLS_GIT_BASE: standin.gitUrl,
    };
    const read = await runCliCaptured(['get', judged], { cwd: project, env });
    expect(read.code).toBe(1);
    expect(read.stderr).toContain(`${judged} was refused: the hub judged it reported-malicious`);
    expect(read.stdout).not.toContain('AMI');

    const install = await runCliCaptured(['install', judged], { cwd: project, env });
    expect(install.code).toBe(1);
    expect(install.stderr).toContain('the hub judged it malicious (reported-malicious)');

    const line = await runCliCaptured(['install', folder, '--yes'], { cwd: project, env });
    expect(line.code).toBe(1);
    expect(line.stderr).toContain('was not installed: the hub judged it malicious');
    expect(line.stderr).toContain(`${judged} (reported-malicious)`);
    // The same folder line written by hand: its resident rows leave the judged skill out and flag the rest.
    await mkdir(path.join(project, '.atskills'), { recursive: true });
    await writeFile(path.join(project, '.atskills', '.autotrigger'), `@${folder}\n`);
    const block = await runCliCaptured(['prompt', '--json'], { cwd: project, env });
    expect(block.code, block.stderr).toBe(0);
    const resident = JSON.parse(block.stdout) as { block: string; warnings: { message: string }[] };
    expect(resident.block).not.toContain(
      '(gh:hashicorp/agent-skills/packer/builders/skills/aws-ami-builder)',
    );
    expect(resident.block).toMatch(
      /\(gh:hashicorp\/agent-skills\/packer\/builders\/skills\/windows-builder\) \[flagged: remote-exec\]/,
    );
    expect(resident.warnings.map((w) => w.message)).toContain(
      `${judged} is left out: the hub judged it malicious (reported-malicious).`,
    );
    const sibling = await runCliCaptured(
      ['get', 'gh:hashicorp/agent-skills/packer/builders/skills/windows-builder'],
      {
        cwd: project,
        env,
      },
    );
    expect(sibling.code, sibling.stderr).toBe(0);
  }, 120_000);
});
