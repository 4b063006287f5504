// Save, re-save and the conflict rule (SPEC 1.5), install/uninstall, triggers, the resident block and
// expand, against real git served over smart HTTP from small repositories.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { countTokens } from '@atskills/protocol/tokens';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJsonOutput, runCliCaptured } from '../../../test/support/cli.js';
import { commitToRepo, createRepo } from '../../../test/support/corpus.js';
import { type GitServer, startGitServer } from '../../../test/support/git-server.js';

const SKILL_V1 = '---\nname: a\ndescription: Version one.\n---\nfirst body\n';
const SKILL_V2 = '---\nname: a\ndescription: Version two.\n---\nsecond body\n';
const SKILL_V3 = '---\nname: a\ndescription: Version three.\n---\nthird body\n';

let root: string;
let server: GitServer;
let work: string;
let rev1: string;

async function project(cacheName = 'cache') {
  const dir = await mkdtemp(path.join(tmpdir(), 'atskills-save-'));
  const cwd = path.join(dir, 'project');
  await mkdir(cwd, { recursive: true });
  const envFor = (cache: string) => ({
    ...process.env,
    ATSKILLS_CACHE: path.join(dir, cache),
    ATSKILLS_GIT_BASE: server.baseUrl,
    ATSKILLS_HUB: 'http://127.0.0.1:9', // no hub: nothing listens on the discard port
  });
  const env = envFor(cacheName);
  return {
    cwd,
    cli: (...argv: string[]) => runCliCaptured(argv, { cwd, env }),
    cliWithCache: (cache: string, ...argv: string[]) => runCliCaptured(argv, { cwd, env: envFor(cache) }),
  };
}

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'atskills-save-repos-'));
  work = (
    await createRepo(root, 'acme/kit', {
      'skills/a/SKILL.md': SKILL_V1,
      'skills/a/notes.md': 'notes\n',
      'skills/b/SKILL.md': '---\nname: b\ndescription: Bee.\n---\nb\n',
    })
  ).workDir;
  const { execFileSync } = await import('node:child_process');
  rev1 = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: work }).toString().trim();
  server = await startGitServer({ root });
});
afterAll(() => server?.close());

describe('save', () => {
  it('saves, answers locally, refreshes an untouched copy, and refuses an edited one until told', async () => {
    const { cwd, cli, cliWithCache } = await project();
    const copy = path.join(cwd, '.atskills/gh/acme/kit/skills/a');
    const today = new Date().toISOString().slice(0, 10);

    const saved = await cli('save', 'gh:acme/kit/skills/a');
    expect(saved.code, saved.stderr).toBe(0);
    expect(saved.stdout).toMatch(/^Saved gh:acme\/kit\/skills\/a/);
    expect(await readFile(path.join(copy, 'SKILL.md'), 'utf8')).toBe(SKILL_V1);
    expect(await readFile(path.join(copy, 'notes.md'), 'utf8')).toBe('notes\n');
    expect(await readFile(path.join(copy, '.source'), 'utf8')).toBe(
      `gh:acme/kit/skills/a\n${today} rev:${rev1}\n`,
    );

    // A saved copy answers its own address, with no request.
    server.resetLog();
    expect(parseJsonOutput(await cli('get', '--json', 'gh:acme/kit/skills/a'))).toMatchObject({
      revision: 'local',
      dir: copy,
    });
    expect(server.log).toEqual([]);

    // Unchanged upstream: nothing to do.
    expect((await cli('save', 'gh:acme/kit/skills/a')).stdout).toMatch(/up to date/);

    // Upstream moved, copy untouched: replaced by the latest. A fresh cache forces the comparison to fetch
    // upstream at the recorded revision rather than reuse what the cache remembers.
    const rev2 = await commitToRepo(work, { 'skills/a/SKILL.md': SKILL_V2 });
    const refreshed = await cliWithCache('other-cache', 'save', 'gh:acme/kit/skills/a');
    expect(refreshed.code, refreshed.stderr).toBe(0);
    expect(refreshed.stdout).toMatch(/^Refreshed/);
    expect(await readFile(path.join(copy, 'SKILL.md'), 'utf8')).toBe(SKILL_V2);
    expect(await readFile(path.join(copy, '.source'), 'utf8')).toBe(
      `gh:acme/kit/skills/a\n${today} rev:${rev2}\n`,
    );

    // Edited copy, upstream moved again: a conflict, and nothing is touched.
    const edited = `${SKILL_V2}my local note\n`;
    await writeFile(path.join(copy, 'SKILL.md'), edited);
    const rev3 = await commitToRepo(work, { 'skills/a/SKILL.md': SKILL_V3 });
    const conflict = await cli('save', 'gh:acme/kit/skills/a');
    expect(conflict.code).toBe(6);
    expect(conflict.stderr).toMatch(/edited since it was saved.*SKILL\.md.*--on-conflict keep/s);
    expect(await readFile(path.join(copy, 'SKILL.md'), 'utf8')).toBe(edited);

    const kept = await cli('save', '--on-conflict', 'keep', 'gh:acme/kit/skills/a');
    expect(kept.code).toBe(0);
    expect(await readFile(path.join(copy, 'SKILL.md'), 'utf8')).toBe(edited);

    const merge = await cli('save', '--on-conflict', 'merge', 'gh:acme/kit/skills/a');
    expect(merge.code).toBe(6);
    expect(merge.stdout).toContain('my local note');
    expect(merge.stdout).toContain('third body');
    expect(await readFile(path.join(copy, 'SKILL.md'), 'utf8')).toBe(edited);

    const refetched = await cli('save', '--on-conflict', 'refetch', 'gh:acme/kit/skills/a');
    expect(refetched.code).toBe(0);
    expect(await readFile(path.join(copy, 'SKILL.md'), 'utf8')).toBe(SKILL_V3);
    expect(await readFile(path.join(copy, '.source'), 'utf8')).toBe(
      `gh:acme/kit/skills/a\n${today} rev:${rev3}\n`,
    );

    // Without a .source the copy cannot be verified: a conflict too.
    await rm(path.join(copy, '.source'));
    const unverifiable = await cli('save', 'gh:acme/kit/skills/a');
    expect(unverifiable.code).toBe(6);
    expect(unverifiable.stderr).toMatch(/no \.source/);
  });

  it('loads the project copy with a note when :save in a message conflicts, touching nothing (exit 6)', async () => {
    const { workDir } = await createRepo(root, 'acme/edits', { 'skills/a/SKILL.md': SKILL_V1 });
    const { cwd, cli } = await project();
    const copy = path.join(cwd, '.atskills/gh/acme/edits/skills/a');
    expect((await cli('save', 'gh:acme/edits/skills/a')).code).toBe(0);
    const edited = `${SKILL_V1}my local note\n`;
    await writeFile(path.join(copy, 'SKILL.md'), edited);
    const source = await readFile(path.join(copy, '.source'), 'utf8');
    await commitToRepo(workDir, { 'skills/a/SKILL.md': SKILL_V2 });

    const result = await cli('expand', '@skills:gh:acme/edits/skills/a:save please');
    expect(result.code).toBe(6);
    // SPEC 1.4: the project's copy is the answer; SPEC 1.5: the conflicting save touched nothing.
    expect(result.stdout).toMatch(/kind="skill" identity="gh:acme\/edits\/skills\/a"[^>]*revision="local"/);
    expect(result.stdout).toContain('my local note');
    expect(result.stdout).not.toContain('was not loaded');
    expect(result.stderr).toMatch(
      /not saved: .*edited since it was saved.*atskills save --on-conflict <choice> gh:acme\/edits\/skills\/a/,
    );
    expect(await readFile(path.join(copy, 'SKILL.md'), 'utf8')).toBe(edited);
    expect(await readFile(path.join(copy, '.source'), 'utf8')).toBe(source);
  });

  it('loads a skill once when a later reference to it asks for :install, and applies the install', async () => {
    const { cwd, cli } = await project();
    const result = await cli(
      'expand',
      'review with @skills:gh:acme/kit/skills/b and @skills:gh:acme/kit/skills/b:install',
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.match(/kind="skill" identity="gh:acme\/kit\/skills\/b"/g)).toHaveLength(1);
    expect(result.stderr).toContain('installed: @gh:acme/kit/skills/b');
    expect(await readFile(path.join(cwd, '.atskills/.autotrigger'), 'utf8')).toBe('@gh:acme/kit/skills/b\n');
  });

  it("keeps a skill's own .source apart from our stamp and never saves a nested .atskills/ (issue 24, finding 14)", async () => {
    await createRepo(root, 'acme/stamped', {
      'skills/s/SKILL.md': '---\nname: s\ndescription: Carries its own stamp.\n---\nbody\n',
      'skills/s/.source': 'gh:someone/else/skills/s\n2020-01-01 rev:0000000\n',
      'skills/s/.atskills/evil/SKILL.md': '---\nname: evil\ndescription: Smuggled.\n---\nx\n',
    });
    const { cwd, cli } = await project();
    const first = await cli('save', 'gh:acme/stamped/skills/s');
    expect(first.code, first.stderr).toBe(0);
    const copy = path.join(cwd, '.atskills/gh/acme/stamped/skills/s');
    expect(await readFile(path.join(copy, '.source'), 'utf8')).toMatch(/^gh:acme\/stamped\/skills\/s\n/);
    await expect(readFile(path.join(copy, '.atskills/evil/SKILL.md'), 'utf8')).rejects.toThrow(/ENOENT/);
    const again = await cli('save', 'gh:acme/stamped/skills/s');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toMatch(/edited/);
  });

  it('refuses to save a project path or a menu', async () => {
    const { cli } = await project();
    expect((await cli('save', 'deploy/runbook')).code).toBe(2);
    const menu = await cli('save', 'gh:acme/kit/skills');
    expect(menu.code).toBe(2);
    expect(menu.stderr).toMatch(/menu of 2 skills/);
  });
});

describe('install, triggers and the resident block', () => {
  it('installs and uninstalls exactly one line each, and renders the block with its token count', async () => {
    const { cwd, cli } = await project();
    await mkdir(path.join(cwd, '.atskills/team/a'), { recursive: true });
    await writeFile(
      path.join(cwd, '.atskills/team/a/SKILL.md'),
      '---\nname: team-a\ndescription: Team skill.\n---\nbody\n',
    );
    const before = '# ours\n';
    await writeFile(path.join(cwd, '.atskills/.autotrigger'), before);
    const file = path.join(cwd, '.atskills/.autotrigger');

    expect((await cli('install', 'team/a')).stdout).toBe('Installed: team/a\n');
    expect((await cli('install', 'team/a')).stdout).toBe('Already installed: team/a\n');
    expect((await cli('install', 'gh:acme/kit/skills/b')).code).toBe(0);
    expect(await readFile(file, 'utf8')).toBe(`${before}team/a\n@gh:acme/kit/skills/b\n`);

    const typo = await cli('install', 'gh:acme/kit/skills/nope');
    expect(typo.code).toBe(3);
    expect(await readFile(file, 'utf8')).toBe(`${before}team/a\n@gh:acme/kit/skills/b\n`);

    await writeFile(file, `${await readFile(file, 'utf8')}missing/*\n`);
    const triggers = parseJsonOutput<{
      lines: { line: number; identities: string[] }[];
      warnings: { line: number; message: string }[];
    }>(await cli('triggers', '--json'));
    expect(triggers.lines.map((l) => [l.line, l.identities])).toEqual([
      [2, ['team/a']],
      [3, ['gh:acme/kit/skills/b']],
      [4, []],
    ]);
    // team/a is named team-a: SPEC 1.1 wants the folder's name, and the warning says file and rule.
    expect(triggers.warnings.map((w) => w.line)).toEqual([2, 4]);
    expect(triggers.warnings[0]?.message).toBe(
      '.atskills/team/a/SKILL.md: "name" should equal the name of the folder holding SKILL.md. [name-folder-mismatch]',
    );

    const prompt = parseJsonOutput<{ block: string; tokens: number }>(await cli('prompt', '--json'));
    expect(prompt.block).toBe('- team-a: Team skill. (team/a)\n- b: Bee. (gh:acme/kit/skills/b)');
    expect(prompt.tokens).toBe(countTokens(prompt.block));
    const text = await cli('prompt');
    expect(text.stdout).toBe(`${prompt.block}\n`);
    expect(text.stderr).toContain(`2 skills, ${prompt.tokens} tokens`);

    await writeFile(file, `${before}team/a\n@gh:acme/kit/skills/b\n`);
    expect((await cli('uninstall', 'gh:acme/kit/skills/b')).stdout).toBe(
      'Uninstalled: @gh:acme/kit/skills/b\n',
    );
    expect((await cli('uninstall', 'team/a')).stdout).toBe('Uninstalled: team/a\n');
    expect((await cli('uninstall', 'team/a')).stdout).toBe('Not installed: team/a\n');
    expect(await readFile(file, 'utf8')).toBe(before);
  });

  it('installs a folder as a whole-directory line that follows every skill of its menu, deduplicated', async () => {
    const { cwd, cli } = await project();
    const file = path.join(cwd, '.atskills/.autotrigger');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, '@gh:acme/kit/skills/b\n');
    const installed = await cli('install', 'gh:acme/kit/skills');
    expect(installed.code, installed.stderr).toBe(0);
    expect(installed.stdout).toBe(
      'Installed: @gh:acme/kit/skills/\n  follows 2 skills: gh:acme/kit/skills/a, gh:acme/kit/skills/b\n',
    );
    expect(await readFile(file, 'utf8')).toBe('@gh:acme/kit/skills/b\n@gh:acme/kit/skills/\n');
    const prompt = parseJsonOutput<{ block: string; warnings: unknown[] }>(await cli('prompt', '--json'));
    // (skill a is at whatever version the tests before this one committed)
    expect(prompt.block).toMatch(
      /^- b: Bee\. \(gh:acme\/kit\/skills\/b\)\n- a: Version \w+\. \(gh:acme\/kit\/skills\/a\)$/,
    );
    expect(prompt.warnings).toEqual([]);
    const triggers = parseJsonOutput<{ lines: { identities: string[] }[] }>(await cli('triggers', '--json'));
    expect(triggers.lines.map((l) => l.identities)).toEqual([
      ['gh:acme/kit/skills/b'],
      ['gh:acme/kit/skills/a'],
    ]);
    // Without the slash a folder line says how to follow it, instead of silently dropping it.
    await writeFile(file, '@gh:acme/kit/skills\n');
    const bare = await cli('prompt');
    expect(bare.stdout).toBe('');
    expect(bare.stderr).toContain('write "@gh:acme/kit/skills/" (with the slash)');
    // `triggers` says the same of that line (it listed it as selecting the folder, with no warning).
    const listed = parseJsonOutput<{ warnings: { line: number; message: string }[] }>(
      await cli('triggers', '--json'),
    );
    expect(listed.warnings).toEqual([
      expect.objectContaining({ line: 1, message: expect.stringContaining('write "@gh:acme/kit/skills/"') }),
    ]);
    expect((await cli('uninstall', 'gh:acme/kit/skills')).code).toBe(0);
  });

  it('warns about project skills that break SPEC 1.1 and keeps empty descriptions out of the block', async () => {
    const { cwd, cli } = await project();
    const write = async (rel: string, text: string) => {
      await mkdir(path.dirname(path.join(cwd, rel)), { recursive: true });
      await writeFile(path.join(cwd, rel), text);
    };
    await write('.atskills/broken/SKILL.md', '---\nname: broken\ndescription: [unclosed\n---\nbody\n');
    await write('.atskills/bare/SKILL.md', '# no frontmatter\n');
    await write('.atskills/Bad_Name/SKILL.md', '---\nname: Bad_Name\ndescription: Works anyway.\n---\n');
    await write('.atskills/.autotrigger', '/broken\n/bare\n/Bad_Name\n');
    const get = await cli('get', 'broken');
    expect(get.code).toBe(0);
    expect(get.stderr).toContain('warning: .atskills/broken/SKILL.md: ');
    expect(get.stderr).toContain('[invalid-yaml]');
    const prompt = await cli('prompt');
    expect(prompt.stdout).toBe('- Bad_Name: Works anyway. (Bad_Name)\n');
    expect(prompt.stderr).toContain('.atskills/bare/SKILL.md: ');
    expect(prompt.stderr).toContain('[no-frontmatter]');
    expect(prompt.stderr).toContain('broken is left out of the resident block');
    expect(prompt.stderr).toContain('.atskills/Bad_Name/SKILL.md: "name" must be lowercase');
    const install = await cli('install', 'bare');
    expect(install.code).toBe(0);
    expect(install.stderr).toContain('warning: .atskills/bare/SKILL.md: ');
  });

  it('update with no identity updates all; outdated names lines that match nothing; publish --dry-run says so', async () => {
    const { cwd, cli } = await project();
    expect((await cli('get', 'gh:acme/kit/skills')).code).toBe(0); // the cache now knows it is a menu
    expect((await cli('save', 'gh:acme/kit/skills/b')).code).toBe(0);
    const update = await cli('update');
    expect(update.code, update.stderr).toBe(0);
    expect(update.stdout).toContain('up to date  gh:acme/kit/skills/b');
    // A folder line without its slash (what a careless :install wrote) and a line naming no skill.
    await writeFile(path.join(cwd, '.atskills/.autotrigger'), '@gh:acme/kit/skills\n/nothing-here\n');
    const outdated = await cli('outdated');
    expect(outdated.code).toBe(8);
    expect(outdated.stdout).toMatch(
      /no-match\s+gh:acme\/kit\/skills .*write "@gh:acme\/kit\/skills\/" \(with the slash\)/,
    );
    expect(outdated.stdout).toMatch(/no-match\s+\/nothing-here .*selects no skill/);
    await mkdir(path.join(cwd, 'pub', 'x'), { recursive: true });
    await writeFile(path.join(cwd, 'pub', 'x', 'SKILL.md'), '---\nname: x\ndescription: X.\n---\nx\n');
    const dry = await cli('publish', path.join(cwd, 'pub'), '--to', 'hub:acme/tools', '--dry-run');
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toBe('Dry run: nothing was published to hub:acme/tools.\n');
  });

  it('expands a message: saves, installs and prints one section per reference', async () => {
    const { cwd, cli } = await project();
    // The menu comes first: once b is saved, `.atskills/gh/acme/kit/skills` exists and answers locally.
    const result = await cli(
      'expand',
      'see @skills:gh:acme/kit/skills, use @skills:gh:acme/kit/skills/b:save:install then @skills:bad:x.',
    );
    expect(result.code).toBe(2);
    // Each section in the untrusted frame, with identity, revision and a project-relative path (SPEC 2.8).
    expect(result.stdout).toMatch(
      /<skill-text-[0-9a-f]{16} kind="skill" identity="gh:acme\/kit\/skills\/b" name="b" revision="local" source="project" status="fresh" flags="none" path=".atskills\/gh\/acme\/kit\/skills\/b">\nb\n<\/skill-text-[0-9a-f]{16}>/,
    );
    expect(result.stdout).toMatch(
      /<skill-text-[0-9a-f]{16} kind="menu" identity="gh:acme\/kit\/skills"[^>]*>\n.*\n- gh:acme\/kit\/skills\/a: Version.*\n- gh:acme\/kit\/skills\/b: Bee\.\n<\/skill-text-/,
    );
    expect(result.stdout.indexOf('kind="menu"')).toBeLessThan(result.stdout.indexOf('kind="skill"'));
    expect(result.stdout).toContain('(atskills: @skills:bad:x was not loaded [unknown-prefix]');
    expect(result.stdout).not.toContain(cwd); // no absolute local path reaches the model
    expect(await readFile(path.join(cwd, '.atskills/gh/acme/kit/skills/b/SKILL.md'), 'utf8')).toContain(
      'name: b',
    );
    expect(await readFile(path.join(cwd, '.atskills/.autotrigger'), 'utf8')).toBe('@gh:acme/kit/skills/b\n');
  });
});
