// One message's references against a small hub stand-in (SPEC 2.2, 2.5, 2.8): the verdicts on the project's
// saved copies are asked in the message's one batch, at their saved revisions, in a hook and outside one;
// a hook's `:install` does not wait past its budget for a locked `.autotrigger`, and says who holds it.
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { Resolver } from '@atskills/protocol/node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  projectWithSavedCopies,
  startVerdictHub,
  type VerdictHub,
} from '../../../packages/protocol/src/node/verdict-hub.test-support.js';
import { expandMessage } from '../src/expand-message.js';
import { renderAnswer } from '../src/inject.js';

/** The hub's current revision of every hub:acme/k/* skill. */
const CURRENT = 'r1';
let hub: VerdictHub;
let base: string;

beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'atskills-expand-'));
  hub = await startVerdictHub({ current: CURRENT, changedFlags: true });
});

afterAll(() => hub.close());

beforeEach(() => {
  // The hub's verdict on the current revision (none until a test says otherwise).
  hub.verdicts = { [CURRENT]: [] };
  hub.mode = 'up';
  hub.asked.length = 0;
});

const skillMd = (name: string) => `---\nname: ${name}\ndescription: Skill ${name}.\n---\nBODY of ${name}\n`;

/** A project holding saved copies of `skills` at the hub's current revision, with cache entries at `r0`. */
const project = (skills: string[]) =>
  projectWithSavedCopies(base, hub.url, skills, { revision: CURRENT, cached: { revision: 'r0', flags: [] } });

describe('a message naming saved copies', () => {
  it("asks their verdicts at the saved revisions in the hook's one batch, and nothing else", async () => {
    const { projectDir, settings } = await project(['hub:acme/k/s']);
    hub.verdicts[CURRENT] = ['reported-malicious'];
    const expansion = await expandMessage(new Resolver(settings), 'use @skills:hub:acme/k/s', {
      projectDir,
      deadline: Date.now() + 1500,
    });
    expect(renderAnswer(expansion.parts, expansion.notes, projectDir)).toContain(
      'Refused @skills:hub:acme/k/s: the hub judged this skill malicious',
    );
    expect(hub.asked).toEqual(['POST /v1/resolve']);
  });

  it('asks them in one batch outside a hook too; a hub that does not answer costs one wait and a note', async () => {
    const skills = ['hub:acme/k/s1', 'hub:acme/k/s2', 'hub:acme/k/s3'];
    const message = skills.map((s) => `@skills:${s}`).join(' ');
    const { projectDir, settings } = await project(skills);
    hub.verdicts[CURRENT] = ['remote-exec'];
    const expansion = await expandMessage(new Resolver(settings), message, { projectDir });
    expect(expansion.parts.map((p) => p.kind === 'resolved' && p.resolved.flags)).toEqual(
      skills.map(() => ['remote-exec']),
    );
    expect(hub.asked).toEqual(['POST /v1/resolve']);

    // Another machine, which never heard a verdict on them, and a hub that takes connections and never answers.
    const other = await project(skills);
    hub.mode = 'blackhole';
    hub.asked.length = 0;
    const started = Date.now();
    const cut = await expandMessage(new Resolver(other.settings), message, { projectDir: other.projectDir });
    // 600 ms for the one batch; a request per copy, each waiting its own 600 ms, took longer and made three.
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(hub.asked).toEqual(['POST /v1/resolve']);
    const text = renderAnswer(cut.parts, cut.notes, other.projectDir);
    for (const skill of skills)
      expect(text).toContain(
        `Warning: the hub's verdict on ${skill} at its saved revision ${CURRENT} could not be checked`,
      );
  });
});

describe(':install in a hook', () => {
  it('does not wait past the budget for a locked .autotrigger: the skill loads, a note names the holder', async () => {
    const { projectDir, settings } = await project([]);
    await mkdir(path.join(projectDir, '.atskills/deploy'), { recursive: true });
    await writeFile(path.join(projectDir, '.atskills/deploy/SKILL.md'), skillMd('deploy'));
    const lock = path.join(projectDir, '.atskills/.autotrigger.lock');
    // Held by a live process of this host (this one's parent): not stale, so it is waited for.
    await writeFile(lock, `${process.ppid} ${hostname()} t\n`);
    const started = Date.now();
    const expansion = await expandMessage(new Resolver(settings), 'use @skills:deploy:install', {
      projectDir,
      deadline: Date.now() + 400,
      requireCheck: true,
    });
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(expansion.notes).toEqual([
      `not installed: deploy: .autotrigger is locked by process ${process.ppid} on ${hostname()} (${lock}); run \`atskills install deploy\` later`,
    ]);
    expect(renderAnswer(expansion.parts, expansion.notes, projectDir)).toContain('BODY of deploy');
    await expect(readFile(path.join(projectDir, '.atskills/.autotrigger'), 'utf8')).rejects.toThrow();
  });
});
