import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Parser, type ReadEntry } from 'tar';
import { describe, expect, it } from 'vitest';
import { checkPackedPaths, packPlan, planPublish } from './pack.js';

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

/** The entry paths of a gzip tar, as any tar reader sees them. */
function entryPaths(archive: Buffer): string[] {
  const paths: string[] = [];
  const parser = new Parser({
    onReadEntry: (e: ReadEntry) => {
      paths.push(e.path);
      e.resume();
    },
  });
  parser.end(gunzipSync(archive));
  return paths;
}

describe('packPlan', () => {
  it('packs folders named @scope or with a colon under exactly their planned paths', async () => {
    const root = await folderWith({
      '@scope/zeta/SKILL.md': skill('zeta'),
      'a:b/delta/SKILL.md': skill('delta'),
      'a:b/delta/c:notes.md': 'colon in a file name',
      'plain/SKILL.md': skill('plain'),
    });
    const plan = await planPublish(root);
    expect(plan.skills.map((s) => s.path).sort()).toEqual(['@scope/zeta', 'a:b/delta', 'plain']);
    const packed = entryPaths(await packPlan(plan));
    expect(packed.sort()).toEqual(plan.files.sort());
  });

  it('refuses to upload an archive whose entries are not the planned files', () => {
    expect(() => checkPackedPaths(['a:b/x/SKILL.md'], ['b/x/SKILL.md'])).toThrow(
      /^The archive does not hold the planned files \(a tar quirk\?\): a:b\/x\/SKILL\.md is missing; b\/x\/SKILL\.md was not planned\. Nothing was published\.$/,
    );
    expect(() => checkPackedPaths(['x/SKILL.md', 'x/a.md'], ['x/a.md', 'x/SKILL.md'])).not.toThrow();
  });
});
