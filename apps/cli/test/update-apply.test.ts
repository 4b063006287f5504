// `update`'s and `outdated`'s modules called directly with the real resolver and `saveSkill` against real git
// served over smart HTTP (no hub: nothing listens on the discard port): the rows they return for untouched,
// edited and upstream-deleted copies, and that an edited copy is left byte for byte as it was.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadSettings, ResolveError, Resolver, saveSkill } from '@atskills/protocol/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitToRepo, createRepo } from '../../../test/support/corpus.js';
import { type GitServer, startGitServer } from '../../../test/support/git-server.js';
import { EXIT } from '../src/exit-codes.js';
import { readInventory } from '../src/inventory.js';
import { checkOutdated, type OutdatedSources, outdatedExitCode } from '../src/outdated-check.js';
import { applyUpdate } from '../src/update-apply.js';
import { planUpdate } from '../src/update-plan.js';

const skill = (name: string, body: string) =>
  `---\nname: ${name}\ndescription: Skill ${name}.\n---\n${body}\n`;

let dir: string;
let server: GitServer;
let work: string;
let project: string;
let resolver: Resolver;

/** The sources `atskills outdated` fills, with the hub unreachable (as on a machine with no hub). */
function sources(): OutdatedSources {
  return {
    cached: async (identity) => (await resolver.cache.read(identity))?.meta,
    resolve: async () => {
      throw new ResolveError('offline', 'The hub at http://127.0.0.1:9 cannot be reached.');
    },
    headCommit: (id) => resolver.headCommit(id),
  };
}

/** `atskills update`'s work for these names: the plan over the project, then a save of each. */
async function update(named: string[] = [], through = resolver) {
  const targets = planUpdate(await readInventory(project), named, {});
  return applyUpdate(targets, (identity) => saveSkill(through, identity, { projectDir: project }));
}

/** A resolver like the test's, over the same git, with its own cache folder. */
function resolverWithCache(cache: string): Resolver {
  return new Resolver(
    loadSettings({
      ATSKILLS_CACHE: path.join(dir, cache),
      ATSKILLS_GIT_BASE: server.baseUrl,
      ATSKILLS_HUB: 'http://127.0.0.1:9',
    }),
  );
}

const copyOf = (name: string) => path.join(project, '.atskills/gh/acme/kit/skills', name);

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'atskills-update-apply-'));
  work = (
    await createRepo(path.join(dir, 'repos'), 'acme/kit', {
      'skills/a/SKILL.md': skill('a', 'a one'),
      'skills/b/SKILL.md': skill('b', 'b one'),
      'skills/c/SKILL.md': skill('c', 'c one'),
    })
  ).workDir;
  server = await startGitServer({ root: path.join(dir, 'repos') });
  project = path.join(dir, 'project');
  await mkdir(project, { recursive: true });
  resolver = resolverWithCache('cache');
  for (const name of ['a', 'b', 'c'])
    await saveSkill(resolver, `gh:acme/kit/skills/${name}`, { projectDir: project });
});
afterAll(async () => {
  server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('update and outdated modules over real git', () => {
  it('finds every copy up to date right after saving, and update changes nothing', async () => {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: work }).toString().trim();
    const report = await checkOutdated(project, sources());
    // The hub is down, so gh: copies are checked over git by the head commit.
    expect(report.rows.map((r) => [r.identity, r.via, r.status, r.latest])).toEqual([
      ['gh:acme/kit/skills/a', 'git', 'up-to-date', head],
      ['gh:acme/kit/skills/b', 'git', 'up-to-date', head],
      ['gh:acme/kit/skills/c', 'git', 'up-to-date', head],
    ]);
    expect(outdatedExitCode(report)).toBe(EXIT.ok);

    const run = await update();
    expect(run.results).toEqual(
      ['a', 'b', 'c'].map((name) => ({
        identity: `gh:acme/kit/skills/${name}`,
        action: 'up-to-date',
        revision: head,
        latestRevision: head,
      })),
    );
    expect(run.summary).toEqual({ refreshed: 0, upToDate: 3, conflicts: 0, failed: 0 });
    expect(run.exitCode).toBe(EXIT.ok);
  });

  it('refreshes untouched copies, refuses an edited one (left as it is) and fails a deleted one', async () => {
    const before = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: work }).toString().trim();
    const edited = `${skill('b', 'b one')}my local note\n`;
    await writeFile(path.join(copyOf('b'), 'SKILL.md'), edited);
    const head = await commitToRepo(work, {
      'skills/a/SKILL.md': skill('a', 'a two'),
      'skills/b/SKILL.md': skill('b', 'b two'),
      'skills/c': null,
    });

    // outdated reads no files: every copy is out of date by its commit, the deleted one included.
    const report = await checkOutdated(project, sources());
    expect(report.rows.map((r) => [r.identity, r.status, r.held, r.latest])).toEqual([
      ['gh:acme/kit/skills/a', 'outdated', before, head],
      ['gh:acme/kit/skills/b', 'outdated', before, head],
      ['gh:acme/kit/skills/c', 'outdated', before, head],
    ]);
    expect(outdatedExitCode(report)).toBe(EXIT.outdated);

    const run = await update();
    expect(run.results[0]).toEqual({
      identity: 'gh:acme/kit/skills/a',
      action: 'refreshed',
      revision: head,
      latestRevision: head,
    });
    expect(run.results[1]).toEqual({
      identity: 'gh:acme/kit/skills/b',
      action: 'conflict',
      reason: expect.stringMatching(/^was edited since it was saved at .* \(SKILL\.md\)$/),
      changed: ['SKILL.md'],
      latestRevision: head,
    });
    // The resolver serves a skill deleted upstream from the cache, marked stale: update says it failed (gone),
    // not that the copy is up to date, and the conflict that came first still decides the exit code.
    expect(run.results[2]).toEqual({
      identity: 'gh:acme/kit/skills/c',
      action: 'failed',
      revision: before,
      error: { code: expect.stringMatching(/^(gone|not-found)$/), message: expect.stringMatching(/./) },
    });
    expect(run.summary).toEqual({ refreshed: 1, upToDate: 0, conflicts: 1, failed: 1 });
    expect(run.exitCode).toBe(EXIT.conflict);
    expect(await readFile(path.join(copyOf('a'), 'SKILL.md'), 'utf8')).toBe(skill('a', 'a two'));
    expect(await readFile(path.join(copyOf('b'), 'SKILL.md'), 'utf8')).toBe(edited);

    // With nothing cached to fall back on, the deleted skill fails (not found: exit 3) and the next one is
    // still saved again; with no conflict the first failure decides the exit code.
    const gone = await update(['gh:acme/kit/skills/c', 'gh:acme/kit/skills/a'], resolverWithCache('fresh'));
    expect(gone.results).toEqual([
      {
        identity: 'gh:acme/kit/skills/c',
        action: 'failed',
        error: expect.objectContaining({ code: 'not-found' }),
      },
      { identity: 'gh:acme/kit/skills/a', action: 'up-to-date', revision: head, latestRevision: head },
    ]);
    expect(gone.summary).toEqual({ refreshed: 0, upToDate: 1, conflicts: 0, failed: 1 });
    expect(gone.exitCode).toBe(EXIT.notFound);

    // A conflict stands over any failure, whichever comes first (exit 6, as `update --help` says).
    const both = await update(['gh:acme/kit/skills/c', 'gh:acme/kit/skills/b'], resolverWithCache('fresh'));
    expect(both.results.map((r) => r.action)).toEqual(['failed', 'conflict']);
    expect(both.exitCode).toBe(EXIT.conflict);
  });
});
