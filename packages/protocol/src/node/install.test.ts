// install/uninstall of `.atskills/.autotrigger` lines (SPEC 1.5) on project skills, offline: the lines they
// write, their turns when many run at once, and what uninstall says of a skill another line keeps resident.
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandAutotrigger, parseAutotrigger } from '../autotrigger.js';
import { parseIdentity } from '../identity.js';
import { autotriggerLine, installSkill, uninstallSkill } from './install.js';
import { Resolver } from './resolver.js';
import { loadSettings } from './settings.js';

async function project(skills: string[]) {
  const projectDir = await mkdtemp(path.join(tmpdir(), 'atskills-install-'));
  for (const skill of skills) {
    const dir = path.join(projectDir, '.atskills', skill);
    await mkdir(dir, { recursive: true });
    const name = path.basename(skill).trim() || 'x';
    await writeFile(
      path.join(dir, 'SKILL.md'),
      `---\nname: ${name}\ndescription: Skill ${name}.\n---\nbody\n`,
    );
  }
  const resolver = new Resolver(
    loadSettings({ ATSKILLS_CACHE: path.join(projectDir, 'cache'), HOME: projectDir }),
  );
  const autotrigger = () => readFile(path.join(projectDir, '.atskills/.autotrigger'), 'utf8');
  return { projectDir, resolver, autotrigger };
}

describe('install', () => {
  it('writes a folder name ending in a space as `\\ ` (gitignore drops a bare trailing space)', async () => {
    const { projectDir, resolver, autotrigger } = await project(['trail ', 'team/tail ']);
    const one = await installSkill(resolver, 'trail%20', { projectDir, offline: true });
    expect(one).toMatchObject({ identity: 'trail ', line: '/trail\\ ', changed: true });
    await installSkill(resolver, 'team/tail%20', { projectDir, offline: true });
    const content = await autotrigger();
    expect(content).toBe('/trail\\ \nteam/tail\\ \n');
    // The lines select exactly those folders, and uninstall finds them again.
    const { entries, warnings } = expandAutotrigger(content, ['trail ', 'trail', 'team/tail ']);
    expect(entries.map((e) => e.identity)).toEqual(['trail ', 'team/tail ']);
    expect(warnings).toEqual([]);
    expect((await uninstallSkill('trail%20', { projectDir })).changed).toBe(true);
    expect(await autotrigger()).toBe('team/tail\\ \n');
  });

  it('writes cloud identities with whitespace encoded, so the line reads back as the same identity', () => {
    for (const text of ['hub:acme/x/trail%20', 'hub:acme/x/a%20b', 'gh:o/r/%E3%80%80x%20']) {
      const id = parseIdentity(text);
      const line = autotriggerLine(id);
      expect(line).toBe(`@${text}`);
      expect(parseAutotrigger(`${line}\n`).rules[0]?.identity).toBe(id.identity);
    }
  });

  it('loses no line when many installs and uninstalls run at once', async () => {
    const names = Array.from({ length: 16 }, (_, i) => `team/s${i}`);
    const { projectDir, resolver, autotrigger } = await project(names);
    await writeFile(path.join(projectDir, '.atskills/.autotrigger'), 'team/old\n');
    await Promise.all([
      ...names.map((name) => installSkill(resolver, name, { projectDir, offline: true })),
      uninstallSkill('team/old', { projectDir }),
    ]);
    const lines = (await autotrigger()).split('\n').filter(Boolean);
    expect(lines.sort()).toEqual(names.sort());
    // The lock is released: nothing is left beside the file.
    expect(await readFile(path.join(projectDir, '.atskills/.autotrigger.lock')).catch(() => 'gone')).toBe(
      'gone',
    );
  });
});

describe('uninstall', () => {
  it('says which line still selects the skill and the exclusion that would drop it', async () => {
    const { projectDir } = await project(['team/deploy', 'team/lint']);
    await writeFile(path.join(projectDir, '.atskills/.autotrigger'), '@hub:acme/playbooks/\nteam/*\n');
    expect(await uninstallSkill('hub:acme/playbooks/deploy', { projectDir })).toEqual({
      identity: 'hub:acme/playbooks/deploy',
      line: '@hub:acme/playbooks/deploy',
      changed: false,
      stillSelectedBy: [{ line: 1, text: '@hub:acme/playbooks/' }],
      exclusion: '!@hub:acme/playbooks/deploy',
    });
    expect(await uninstallSkill('team/deploy', { projectDir })).toMatchObject({
      changed: false,
      stillSelectedBy: [{ line: 2, text: 'team/*' }],
      exclusion: '!team/deploy',
    });
    // Its own line removed and nothing else selecting it: nothing more to say.
    await writeFile(
      path.join(projectDir, '.atskills/.autotrigger'),
      '@hub:acme/playbooks/\n!@hub:acme/playbooks/deploy\n@hub:acme/other\n',
    );
    expect(await uninstallSkill('hub:acme/playbooks/deploy', { projectDir })).not.toHaveProperty(
      'stillSelectedBy',
    );
    expect(await uninstallSkill('hub:acme/other', { projectDir })).toEqual({
      identity: 'hub:acme/other',
      line: '@hub:acme/other',
      changed: true,
    });
  });
});
