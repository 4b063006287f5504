import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { diskPath, formatSourceStamp, parseIdentity } from '@atskills/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ProjectInventory, readInventory } from './inventory.js';
import { planUpdate } from './update-plan.js';

let project: string;
let inventory: ProjectInventory;

beforeAll(async () => {
  project = await mkdtemp(path.join(tmpdir(), 'atskills-update-plan-'));
  for (const identity of ['hub:acme/kit/b', 'gh:octo/kit/skills/a']) {
    const dir = path.join(project, diskPath(parseIdentity(identity)));
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'SKILL.md'), '---\nname: x\ndescription: X.\n---\nx\n');
    await writeFile(
      path.join(dir, '.source'),
      formatSourceStamp({ identity, date: '2026-11-30', revision: 'r1' }),
    );
  }
  // A stamp naming another identity than its folder: not a saved skill update may touch.
  const stray = path.join(project, '.atskills/gh/octo/kit/skills/stray');
  await mkdir(stray, { recursive: true });
  await writeFile(
    path.join(stray, '.source'),
    formatSourceStamp({ identity: 'gh:octo/kit/skills/other', date: '2026-11-30', revision: 'r1' }),
  );
  inventory = await readInventory(project);
});
afterAll(async () => {
  await rm(project, { recursive: true, force: true });
});

describe('planUpdate', () => {
  it('takes every saved skill with a sound stamp when none is named, or with --all', () => {
    expect(inventory.saved.find((s) => s.identity === 'gh:octo/kit/skills/other')?.stampProblem).toMatch(
      /names gh:octo\/kit\/skills\/other/,
    );
    const every = ['gh:octo/kit/skills/a', 'hub:acme/kit/b'];
    expect(planUpdate(inventory, [], {})).toEqual(every);
    expect(planUpdate(inventory, [], { all: true })).toEqual(every);
  });

  it('takes the named skills in the order named, written as the canonical identity', () => {
    expect(planUpdate(inventory, ['hub:acme/kit/b', 'gh:octo/kit/skills/a/'], {})).toEqual([
      'hub:acme/kit/b',
      'gh:octo/kit/skills/a',
    ]);
  });

  it('refuses names with --all (usage) and a name the project has not saved (not-found)', () => {
    expect(() => planUpdate(inventory, ['hub:acme/kit/b'], { all: true })).toThrow(
      expect.objectContaining({ code: 'usage' }),
    );
    expect(() => planUpdate(inventory, ['hub:acme/kit/b', 'hub:acme/kit/unsaved'], {})).toThrow(
      expect.objectContaining({
        code: 'not-found',
        message: expect.stringMatching(/^hub:acme\/kit\/unsaved is not saved in this project/),
      }),
    );
    expect(() => planUpdate(inventory, ['gh:octo/kit/skills/other'], {})).toThrow(
      expect.objectContaining({ code: 'not-found' }),
    );
  });
});
