// Hostile repositories (issue 8): each is recorded for what it is and never stops the others.
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { blobs, crawlReportsOfRun, skills } from '@atskills/db';
import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRepo, git } from '../../../test/support/corpus.js';
import { type Crawler, createCrawler } from '../src/crawler.js';
import { type CrawlFixture, liveSkills, startCrawlFixture, testLogger } from './crawl-fixture.js';

const ok = (name: string) => `---\nname: ${name}\ndescription: A fine skill.\n---\nbody\n`;
const MAX_FILE = 64 * 1024;

const aliasBomb = [
  '---',
  'name: bomb',
  'description: boom',
  'a: &a ["x","x","x","x","x","x","x","x","x"]',
  'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]',
  'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]',
  'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]',
  'e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]',
  'f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]',
  'g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]',
  '---',
  'body',
].join('\n');

let root: string;
let fx: CrawlFixture;
let crawler: Crawler;
let run: Awaited<ReturnType<Crawler['waitForRun']>>;
const repos = [
  'hostile/symlink',
  'hostile/submodule',
  'hostile/binary',
  'hostile/alias-bomb',
  'hostile/huge',
  'hostile/vanishing',
  'hostile/hanging',
  'hostile/fine',
  'hostile/empty',
  'hostile/reserved',
  'hostile/unparsed',
  'hostile/paths',
];

/** SKILL.md files whose frontmatter does not parse: recorded with the error, yet their text is the body. */
const unparsed = {
  nofm: '# Just markdown, no frontmatter\n',
  noclose: '---\nname: noclose\ndescription: Never closed\n# Body\n',
  dup: '---\nname: dup\nname: dup\ndescription: Twice\n---\n# Dup\n',
  num: '---\nname: 123\ndescription: A number\n---\n# Num\n',
};

async function report(name: string) {
  const reports = await crawlReportsOfRun(fx.db.db, run.id);
  return reports.find((r) => `${r.owner}/${r.name}` === name)!.report;
}

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'atskills-hostile-'));
  await createRepo(root, 'hostile/symlink', {
    'real/notes.md': ok('notes'),
    'linked/SKILL.md': { symlink: '../real/notes.md' },
    'ok/SKILL.md': ok('ok'),
  });
  const sub = await createRepo(root, 'hostile/submodule', { 'ok/SKILL.md': ok('ok') });
  // Gitlinks (submodule entries) can only be made with plumbing: one named SKILL.md, one a folder.
  const commit = (await git(['rev-parse', 'HEAD'], sub.workDir)).trim();
  await git(['update-index', '--add', '--cacheinfo', `160000,${commit},trap/SKILL.md`], sub.workDir);
  await git(['update-index', '--add', '--cacheinfo', `160000,${commit},vendor/skills`], sub.workDir);
  await git(['commit', '-q', '-m', 'gitlinks'], sub.workDir);
  await git(['push', '-q', 'origin', 'main'], sub.workDir);
  await createRepo(root, 'hostile/binary', {
    'bin/SKILL.md': Buffer.from([0x2d, 0x2d, 0x2d, 0x0a, 0xff, 0xfe, 0x00, 0x81, 0x0a]),
    'ok/SKILL.md': ok('ok'),
  });
  await createRepo(root, 'hostile/alias-bomb', { 'bomb/SKILL.md': aliasBomb });
  await createRepo(root, 'hostile/huge', {
    'big/SKILL.md': ok('big'),
    'big/data.bin': Buffer.alloc(MAX_FILE * 4, 7),
    'hugeskill/SKILL.md': `${ok('hugeskill')}${'x'.repeat(MAX_FILE * 2)}`,
  });
  await createRepo(root, 'hostile/vanishing', { 'ok/SKILL.md': ok('ok') });
  await createRepo(root, 'hostile/hanging', { 'ok/SKILL.md': ok('ok') });
  await createRepo(root, 'hostile/fine', { 'ok/SKILL.md': ok('ok') });
  await git(['init', '-q', '--bare', path.join(root, 'hostile/empty.git')], root);
  // A shipped .source would make every later `atskills save` see a false "edited" copy; a nested
  // .atskills/ would take over the project root of anyone working inside the saved copy (issue 16).
  await createRepo(root, 'hostile/reserved', {
    'tool/SKILL.md': ok('tool'),
    'tool/.source': 'gh:someone/else/tool\n2026-01-01 rev:abc\n',
    'tool/.atskills/.autotrigger': '@gh:attacker/skills/all\n',
    'tool/notes.md': 'kept\n',
  });
  await createRepo(
    root,
    'hostile/unparsed',
    Object.fromEntries(Object.entries(unparsed).map(([name, text]) => [`skills/${name}/SKILL.md`, text])),
  );
  // Trees no checkout can make (git refuses such paths in a working tree), built with plumbing: a file
  // whose name holds backslashes beside a SKILL.md, and a SKILL.md inside a `.git` folder.
  const paths = (await createRepo(root, 'hostile/paths', { 'README.md': 'trees\n' })).bareDir;
  const piped = (args: string[], input: string) =>
    execFileSync('git', args, { cwd: paths, input }).toString().trim();
  const blob = async (text: string) => piped(['hash-object', '-w', '--stdin'], text);
  const tree = async (lines: string[]) => piped(['mktree'], `${lines.join('\n')}\n`);
  const skillMd = await blob(ok('bs'));
  const bs = await tree([
    `100644 blob ${skillMd}\tSKILL.md`,
    `100644 blob ${await blob('x\n')}\t..\\..\\x.md`,
  ]);
  const dotGit = await tree([`100644 blob ${skillMd}\tSKILL.md`]);
  const top = await tree([`040000 tree ${bs}\tbs`, `040000 tree ${dotGit}\t.git`]);
  const commitSha = (await git(['commit-tree', '-m', 'hostile paths', top], paths)).trim();
  await git(['update-ref', 'refs/heads/main', commitSha], paths);
  fx = await startCrawlFixture('hostile', root);
  // The probe (GET info/refs and POST ls-refs) succeeds, then the repository vanishes.
  fx.standin.setGitFault('hostile/vanishing', { kind: 'status', status: 404, after: 2 });
  fx.standin.setGitFault('hostile/hanging', { kind: 'hang' });
  crawler = createCrawler({
    db: fx.db.db,
    settings: fx.settings({
      CRAWL_CONCURRENCY: 4,
      CRAWL_MAX_FILE_BYTES: MAX_FILE,
      CRAWL_JOB_TIMEOUT_MS: 20_000,
    }),
    logger: testLogger,
  });
  const runId = await crawler.startRun({ kind: 'repos', source: { kind: 'repos', repos } });
  run = await crawler.waitForRun(runId, { pollMs: 100 });
}, 180_000);

afterAll(async () => {
  await crawler?.close({ deadlineMs: 1000 });
  await fx?.close();
  await rm(root, { recursive: true, force: true });
});

describe('hostile repositories', () => {
  it('skip a reserved .source and a nested .atskills/ in a skill, keeping the rest', async () => {
    const tool = (await liveSkills(fx.db, 'hostile', 'reserved')).get('tool')!;
    expect(tool.files.map((f) => f.path).sort()).toEqual(['SKILL.md', 'notes.md']);
    const r = await report('hostile/reserved');
    expect(r.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'tool/.source', code: 'reserved-path' }),
        expect.objectContaining({ path: 'tool/.atskills/.autotrigger', code: 'reserved-path' }),
      ]),
    );
  });

  it('leave out a file whose name holds a backslash, and say why; and name a SKILL.md inside .git', async () => {
    const bs = (await liveSkills(fx.db, 'hostile', 'paths')).get('bs')!;
    expect(bs.files.map((f) => f.path)).toEqual(['SKILL.md']);
    const r = await report('hostile/paths');
    expect(r.errors).toContainEqual(
      expect.objectContaining({ path: 'bs/..\\..\\x.md', code: 'invalid-path' }),
    );
    expect(r.warnings).toContainEqual(
      expect.objectContaining({ path: '.git/SKILL.md', code: 'skill-file-in-git-folder' }),
    );
  });

  it('finish the run, every repository with a report', () => {
    expect(run.status).toBe('finished');
    expect(run.repositoriesDone).toBe(repos.length);
  });

  it('never follow a SKILL.md that is a symlink', async () => {
    expect([...(await liveSkills(fx.db, 'hostile', 'symlink')).keys()]).toEqual(['ok']);
    const r = await report('hostile/symlink');
    expect(r.warnings).toContainEqual(
      expect.objectContaining({ path: 'linked/SKILL.md', code: 'skill-file-symlink' }),
    );
  });

  it('never follow submodules', async () => {
    expect([...(await liveSkills(fx.db, 'hostile', 'submodule')).keys()]).toEqual(['ok']);
    const r = await report('hostile/submodule');
    expect(r.outcome).toBe('indexed');
    expect(r.warnings).toContainEqual(
      expect.objectContaining({ path: 'trap/SKILL.md', code: 'skill-file-submodule' }),
    );
  });

  it('record a binary SKILL.md as not UTF-8 and index its neighbour', async () => {
    const live = await liveSkills(fx.db, 'hostile', 'binary');
    expect(live.get('bin')?.parseError?.code).toBe('not-utf8');
    expect(live.get('ok')?.parseError).toBeNull();
  });

  it('keep the text of a SKILL.md whose frontmatter does not parse as its body, named by its folder', async () => {
    const live = await liveSkills(fx.db, 'hostile', 'unparsed');
    for (const [name, text] of Object.entries(unparsed)) {
      const row = live.get(`skills/${name}`);
      expect(row?.parseError, name).not.toBeNull();
      expect([row?.name, row?.body, row?.description], name).toEqual([name, text, '']);
      expect(row?.bodyTokens, name).toBeGreaterThan(0);
    }
    // The binary one has no text to keep.
    expect((await liveSkills(fx.db, 'hostile', 'binary')).get('bin')?.body).toBe('');
  });

  it('refuse a YAML alias bomb', async () => {
    const live = await liveSkills(fx.db, 'hostile', 'alias-bomb');
    expect(live.get('bomb')?.parseError?.code).toMatch(/too-many-aliases|invalid-yaml/);
    expect((await report('hostile/alias-bomb')).errors).toHaveLength(1);
  });

  it('skip files over the size limit without downloading them', async () => {
    const live = await liveSkills(fx.db, 'hostile', 'huge');
    const big = live.get('big')!;
    expect(big.parseError).toBeNull();
    expect(big.files.find((f) => f.path === 'data.bin')?.skipped).toMatch(/larger than/);
    expect(big.files.find((f) => f.path === 'SKILL.md')?.skipped).toBeUndefined();
    expect(live.get('hugeskill')?.parseError?.code).toBe('too-large');
    const r = await report('hostile/huge');
    expect(r.bytesDownloaded).toBeLessThan(MAX_FILE * 2);
    const stored = await fx.db.db
      .select({ size: blobs.size })
      .from(blobs)
      .where(inArray(blobs.sha256, big.files.map((f) => f.sha256).filter(Boolean)));
    expect(Math.max(...stored.map((s) => s.size))).toBeLessThanOrEqual(MAX_FILE);
  });

  it('record a repository that disappears mid-crawl as gone', async () => {
    const r = await report('hostile/vanishing');
    expect(r.outcome).toBe('gone');
    expect(await fx.db.db.select().from(skills).where(eq(skills.container, 'vanishing'))).toHaveLength(0);
  });

  it('index an empty repository as holding no skills', async () => {
    const r = await report('hostile/empty');
    expect(r).toMatchObject({ outcome: 'indexed', skillsFound: 0, errors: [] });
  });

  it('time out a hanging git server alone, with the reason recorded', async () => {
    const r = await report('hostile/hanging');
    expect(r.outcome).toBe('failed');
    expect(r.errors[0]).toMatchObject({ code: 'timeout' });
    expect(r.errors[0]!.message).toMatch(/Timed out after 20000 ms/);
    expect((await report('hostile/fine')).outcome).toBe('indexed');
    expect([...(await liveSkills(fx.db, 'hostile', 'fine')).keys()]).toEqual(['ok']);
  });
});
