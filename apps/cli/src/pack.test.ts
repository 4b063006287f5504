import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { planPublish } from './pack.js';

const skill = (name: string) => `---\nname: ${name}\ndescription: The ${name} skill.\n---\nbody\n`;

async function folderWith(files: Record<string, string | Buffer>): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), 'atskills-pack-'));
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await writeFile(path.join(root, rel), content);
  }
  return root;
}

describe('planPublish', () => {
  it('leaves out what a .gitignore names, at its folder and below, and says so', async () => {
    const root = await folderWith({
      '.gitignore': 'secret.env\n',
      'deploy/SKILL.md': skill('deploy'),
      'deploy/.gitignore': 'node_modules/\n*.log\n',
      'deploy/node_modules/x/index.js': '1',
      'deploy/debug.log': 'log',
      'deploy/secret.env': 'TOKEN=abc',
      'deploy/notes.md': 'kept',
    });
    const plan = await planPublish(root);
    expect(plan.files.sort()).toEqual(['deploy/.gitignore', 'deploy/SKILL.md', 'deploy/notes.md']);
    expect(plan.ignored.sort()).toEqual([
      'deploy/debug.log',
      'deploy/node_modules/x/index.js',
      'deploy/secret.env',
    ]);
  });

  it("leaves out a saved copy's .source stamp, which the hub refuses in a skill", async () => {
    const root = await folderWith({
      'deploy/SKILL.md': skill('deploy'),
      'deploy/.source': 'hub:acme/kit/deploy\n2026-12-01 rev:abc\n',
    });
    const plan = await planPublish(root);
    expect(plan.files).toEqual(['deploy/SKILL.md']);
    expect(plan.reserved).toEqual(['deploy/.source']);
  });

  it("checks a root SKILL.md's name against the collection it becomes, not the local folder", async () => {
    const root = await folderWith({ 'SKILL.md': skill('playbooks') });
    await expect(planPublish(root)).rejects.toThrow(/name-folder-mismatch/);
    expect((await planPublish(root, { collection: 'playbooks' })).skills).toEqual([
      { path: '', name: 'playbooks', files: 1, bytes: skill('playbooks').length },
    ]);
  });

  it('names a file whose name is not UTF-8 instead of failing on it', async () => {
    const root = await folderWith({ 'deploy/SKILL.md': skill('deploy') });
    await writeFile(
      Buffer.concat([Buffer.from(`${root}/deploy/bad`), Buffer.from([0xff, 0xfe]), Buffer.from('.txt')]),
      'x',
    );
    await expect(planPublish(root)).rejects.toThrow(
      /^Cannot publish: deploy\/bad.*\.txt: the file name is not valid UTF-8; rename it\.$/,
    );
  });
});
