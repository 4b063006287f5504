// A saved copy's verdict (SPEC 2.8) against a small hub stand-in that can be cut (connections refused) or
// black-holed (accepted, never answered): a verdict heard on the saved revision is kept under that revision
// and never replaced by another revision's flags; a verdict nobody heard is unknown, said in a note, never
// "none"; saved copies are asked in one batch outside hooks too, and a hub that did not answer is not waited
// for again; a hook's install does not wait past its budget for a locked `.autotrigger`.
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { installSkill, residentBlock } from '../src/node/install.js';
import { Resolver } from '../src/node/resolver.js';
import {
  projectWithSavedCopies,
  startVerdictHub,
  type VerdictHub,
} from '../src/node/verdict-hub.test-support.js';

let hub: VerdictHub;
let base: string;

beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'atskills-saved-verdicts-'));
  hub = await startVerdictHub({ current: 'rev2' });
});

afterAll(() => hub.close());

beforeEach(() => {
  // The hub's verdict on each revision of every hub:acme/k/* skill; the current revision is `hub.current`.
  hub.verdicts = {};
  hub.current = 'rev2';
  hub.mode = 'up';
  hub.asked.length = 0;
});

/** A project holding saved copies of `skills` at `revision`, and a cache entry of each at `cached` (if set). */
const project = (
  skills: string[],
  options: { revision?: string; cached?: { revision: string; flags: string[] } } = {},
) => projectWithSavedCopies(base, hub.url, skills, { revision: 'rev1', ...options });

const SKILL = 'hub:acme/k/s';

describe("a saved copy's verdict", () => {
  it('is kept under the saved revision, and a cache at another revision never lends its flags', async () => {
    const { projectDir, settings } = await project([SKILL], { cached: { revision: 'rev2', flags: [] } });
    hub.verdicts = { rev1: ['reported-malicious'], rev2: [] };
    const heard = await new Resolver(settings).resolve(SKILL, { projectDir });
    expect(heard).toMatchObject({ origin: 'local', flags: ['reported-malicious'] });
    const meta = new Resolver(settings).cache.readMeta(SKILL);
    expect(meta).toMatchObject({ revision: 'rev2', flags: [], verdicts: { rev1: ['reported-malicious'] } });

    // The hub down, within a hook's budget; offline; a bare path: the verdict heard on rev1 stands.
    hub.mode = 'refuse';
    const down = await new Resolver(settings).resolve(SKILL, { projectDir, deadline: Date.now() + 1500 });
    expect(down.flags).toEqual(['reported-malicious']);
    for (const asWhat of [SKILL, 'hub/acme/k/s'])
      expect((await new Resolver(settings).resolve(asWhat, { projectDir, offline: true })).flags).toEqual([
        'reported-malicious',
      ]);
  });

  it('is unknown when no verdict on the saved revision was heard: served with a note, never as "none"', async () => {
    const { projectDir, settings } = await project([SKILL], { cached: { revision: 'rev2', flags: [] } });
    hub.mode = 'refuse';
    for (const options of [{ deadline: Date.now() + 1500 }, {}, { offline: true }]) {
      const answer = await new Resolver(settings).resolve(SKILL, { projectDir, ...options });
      expect(answer).toMatchObject({ origin: 'local', flags: [] });
      expect(answer.kind === 'skill' && answer.verdictUnchecked).toMatch(
        /^the hub's verdict on hub:acme\/k\/s at its saved revision rev1 could not be checked \(.+; none was heard before\)$/,
      );
    }
    // A cache holding the saved revision itself speaks for it.
    const same = await project([SKILL], { cached: { revision: 'rev1', flags: ['remote-exec'] } });
    const answer = await new Resolver(same.settings).resolve(SKILL, {
      projectDir: same.projectDir,
      offline: true,
    });
    expect(answer).toMatchObject({ flags: ['remote-exec'] });
    expect(answer).not.toHaveProperty('verdictUnchecked');
  });
});

describe("saved copies' verdicts outside hooks", () => {
  const skills = ['hub:acme/k/s1', 'hub:acme/k/s2', 'hub:acme/k/s3', 'hub:acme/k/s4'];

  it('are hub.asked in one batch, and a hub that does not answer costs one wait, not one per copy', async () => {
    const { projectDir, settings } = await project(skills);
    await writeFile(path.join(projectDir, '.atskills/.autotrigger'), skills.map((s) => `@${s}\n`).join(''));
    hub.verdicts = { rev1: ['reported-malicious'] };
    hub.current = 'rev1';
    const judged = await residentBlock(new Resolver(settings), { projectDir, countTokens: false });
    expect(judged.entries).toEqual([]);
    expect(hub.asked).toEqual(['POST /v1/resolve']);

    hub.mode = 'blackhole';
    hub.asked.length = 0;
    const resolver = new Resolver(settings);
    const started = Date.now();
    const report = await residentBlock(resolver, { projectDir, countTokens: false });
    // 600 ms for the one batch; a wait per copy took 4 x 600 ms.
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(hub.asked).toEqual(['POST /v1/resolve']);
    expect(report.entries.map((e) => e.identity)).toEqual(skills);
    expect(report.warnings.map((w) => w.message)).toEqual(
      skills.map((s) =>
        expect.stringMatching(
          new RegExp(`^${s}: the hub's verdict on ${s} at its saved revision rev1 could not be checked`),
        ),
      ),
    );
    // Asked again by the same resolver: the answer it had stands, with no new request.
    const again = await resolver.resolve(skills[0]!, { projectDir });
    expect(again.kind === 'skill' && again.verdictUnchecked).toBeTruthy();
    expect(hub.asked).toHaveLength(1);
  });

  it('stop after the first request the hub did not answer, and are remembered without a deadline', async () => {
    const { projectDir, settings } = await project(skills);
    hub.mode = 'blackhole';
    const resolver = new Resolver(settings);
    const started = Date.now();
    for (const skill of skills) await resolver.resolve(skill, { projectDir });
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(hub.asked).toEqual(['HEAD /v1/skills/hub:acme/k/s1?rev=rev1']);
    hub.mode = 'up';
    hub.verdicts = { rev1: [] };
    await resolver.resolve(skills[0]!, { projectDir });
    expect(hub.asked).toHaveLength(1);
  });
});

describe('install under a deadline', () => {
  it('does not wait past the budget for a locked .autotrigger, and names who holds it', async () => {
    const { projectDir, settings } = await project([]);
    await mkdir(path.join(projectDir, '.atskills/deploy'), { recursive: true });
    await writeFile(
      path.join(projectDir, '.atskills/deploy/SKILL.md'),
      '---\nname: deploy\ndescription: Deploys.\n---\nbody\n',
    );
    // Held by a live process of this host (this one's parent): not stale, so it is waited for.
    await writeFile(
      path.join(projectDir, '.atskills/.autotrigger.lock'),
      `${process.ppid} ${hostname()} t\n`,
    );
    const started = Date.now();
    const outcome = await installSkill(new Resolver(settings), 'deploy', {
      projectDir,
      deadline: Date.now() + 300,
    });
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(outcome).toMatchObject({ changed: false, refused: 'locked' });
    expect(outcome.warning).toContain(`.autotrigger is locked by process ${process.ppid} on ${hostname()}`);
  });
});
