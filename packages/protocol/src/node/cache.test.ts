import { createHash } from 'node:crypto';
import {
  appendFile,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  symlink,
  utimes,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CacheEntryMeta, clientCache, isCruft, SkillCache } from './cache.js';
import { walkFolder } from './fs-tree.js';
import { cacheDirFrom } from './settings.js';

function meta(identity: string, contentKey: string, revision = contentKey): CacheEntryMeta {
  const now = new Date().toISOString();
  return {
    version: 1,
    identity,
    source: 'gh',
    kind: 'skill',
    revision,
    fetchedAt: now,
    checkedAt: now,
    contentKey,
  };
}

const GIT_BASE = 'https://github.com';
const scratchCache = async () =>
  new SkillCache(await mkdtemp(path.join(tmpdir(), 'atskills-cache-')), () => GIT_BASE);

async function stage(cache: SkillCache, files: Record<string, string>): Promise<string> {
  const dir = await cache.makeTemp();
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await writeFile(path.join(dir, rel), content);
  }
  return dir;
}

describe('SkillCache', () => {
  it('finds its folder from ATSKILLS_CACHE, then XDG_CACHE_HOME, then HOME', () => {
    expect(cacheDirFrom({ ATSKILLS_CACHE: '/c', XDG_CACHE_HOME: '/x', HOME: '/h' })).toBe('/c');
    expect(cacheDirFrom({ XDG_CACHE_HOME: '/x', HOME: '/h' })).toBe('/x/atskills');
    expect(cacheDirFrom({ HOME: '/h' })).toBe('/h/.cache/atskills');
  });

  it('commits content atomically; a second commit of the same key keeps the first and drops its own', async () => {
    const cache = await scratchCache();
    const a = await stage(cache, { 'SKILL.md': 'one' });
    const b = await stage(cache, { 'SKILL.md': 'one' });
    const first = await cache.commitContent('gh:o/r/p', 'k1', a);
    const second = await cache.commitContent('gh:o/r/p', 'k1', b);
    expect(second).toBe(first);
    expect(await readFile(path.join(first, 'SKILL.md'), 'utf8')).toBe('one');
    expect(await readdir(path.join(cache.root, 'tmp'))).toEqual([]);
    // Content without metadata is not an entry.
    expect(await cache.read('gh:o/r/p')).toBeUndefined();
    await cache.writeMeta(meta('gh:o/r/p', 'k1'));
    expect((await cache.read('gh:o/r/p'))?.dir).toBe(first);
  });

  it('keeps the current and previous content folders and drops older ones', async () => {
    const cache = await scratchCache();
    for (const key of ['k1', 'k2', 'k3'])
      await cache.commitContent('gh:o/r/p', key, await stage(cache, { 'SKILL.md': key }));
    await cache.writeMeta({ ...meta('gh:o/r/p', 'k3'), previous: { revision: 'k2', contentKey: 'k2' } });
    expect((await readdir(path.join(cache.entryDir('gh:o/r/p'), 'content'))).sort()).toEqual(['k2', 'k3']);
    expect((await cache.list()).map((e) => e.identity)).toEqual(['gh:o/r/p']);
    expect(await cache.clear()).toBe(1);
    expect(await cache.list()).toEqual([]);
  });

  it('strips symlinks, .git and top-level README/LICENSE before content lands', async () => {
    const cache = await scratchCache();
    const dir = await stage(cache, {
      'SKILL.md': 's',
      'README.md': 'r',
      'LICENSE.txt': 'l',
      'docs/README.md': 'kept',
      '.git/config': 'x',
    });
    await symlink('/etc/passwd', path.join(dir, 'link'));
    const final = await cache.commitContent('gh:o/r/p', 'k', dir);
    expect((await walkFolder(final)).map((e) => `${e.type}:${e.path}`)).toEqual([
      'file:SKILL.md',
      'dir:docs',
      'file:docs/README.md',
    ]);
    expect([
      isCruft('LICENSE'),
      isCruft('license.md'),
      isCruft('COPYING'),
      isCruft('refs/LICENSE'),
      isCruft('SKILL.md'),
    ]).toEqual([true, true, true, false, false]);
  });

  it("keeps one hub's copy of a `hub:` identity from another hub's skill of the same name", async () => {
    const cacheDir = await mkdtemp(path.join(tmpdir(), 'atskills-cache-'));
    const settings = { cacheDir, gitBase: GIT_BASE };
    const first = clientCache({ ...settings, hubUrl: 'https://hub.one.example' });
    const second = clientCache({ ...settings, hubUrl: 'https://hub.two.example' });
    const identity = 'hub:acme/playbooks/deploy';
    await first.commitContent(identity, 'k1', await stage(first, { 'SKILL.md': 'one' }));
    await first.writeMeta({ ...meta(identity, 'k1'), source: 'hub' });
    expect((await first.read(identity))?.meta.origin).toBe('https://hub.one.example');
    expect(await second.read(identity)).toBeUndefined();
    expect(second.readMeta(identity)).toBeUndefined();
    // `gh:` copies come from the git base whichever hub is set.
    await first.commitContent('gh:o/r/p', 'k2', await stage(first, { 'SKILL.md': 'two' }));
    await first.writeMeta(meta('gh:o/r/p', 'k2'));
    expect((await second.read('gh:o/r/p'))?.meta.revision).toBe('k2');
    expect((await second.list()).map((e) => `${e.identity} ${e.origin}`)).toEqual([
      'gh:o/r/p https://github.com',
      'hub:acme/playbooks/deploy https://hub.one.example',
    ]);
  });

  it('serves no content that changed after it was cached, and a new commit replaces a corrupt folder', async () => {
    const cache = await scratchCache();
    const id = 'gh:o/r/p';
    const dir = await cache.commitContent(id, 'k1', await stage(cache, { 'SKILL.md': 'one', 'a/b.md': 'b' }));
    await cache.writeMeta(meta(id, 'k1'));
    expect((await cache.read(id))?.dir).toBe(dir);
    expect(await cache.hasContent(id, 'k1')).toBe(true);

    // Text appended: the size differs, so one stat per file tells (no hash on the hit).
    await appendFile(path.join(dir, 'SKILL.md'), 'injected');
    expect(await cache.read(id)).toBeUndefined();
    expect(await cache.hasContent(id, 'k1')).toBe(false);
    // The refetch's copy replaces the folder (a refetch used to find the folder there and drop its copy).
    expect(
      await cache.commitContent(id, 'k1', await stage(cache, { 'SKILL.md': 'one', 'a/b.md': 'b' })),
    ).toBe(dir);
    expect(await readFile(path.join(dir, 'SKILL.md'), 'utf8')).toBe('one');
    expect((await cache.read(id))?.dir).toBe(dir);

    // Same size, other bytes (the mtime moved): hashed, and refused.
    const later = new Date(Date.now() + 5_000); // an mtime that moved even on a coarse file system
    await writeFile(path.join(dir, 'a/b.md'), 'X');
    await utimes(path.join(dir, 'a/b.md'), later, later);
    expect(await cache.read(id)).toBeUndefined();
    await writeFile(path.join(dir, 'a/b.md'), 'b');
    await utimes(path.join(dir, 'a/b.md'), later, later);
    // Same bytes, new mtime (a copied cache): still served, and one stat per file again after.
    expect((await cache.read(id))?.dir).toBe(dir);
    // A file that was not there: a full check (what a fetch does before reusing the folder) finds it.
    await writeFile(path.join(dir, 'extra.sh'), 'rm -rf ~');
    expect(await cache.hasContent(id, 'k1')).toBe(false);
    await rm(path.join(dir, 'extra.sh'));
    expect(await cache.hasContent(id, 'k1')).toBe(true);
  });

  it('trusts a folder cached before manifests, as before (a hit never hashes it; a fetch records its manifest)', async () => {
    const cache = await scratchCache();
    const id = 'gh:o/r/p';
    for (const key of ['k1', 'k2'])
      await cache.commitContent(id, key, await stage(cache, { 'SKILL.md': key, 'a/b.md': 'b' }));
    await cache.writeMeta({ ...meta(id, 'k2'), previous: { revision: 'k1', contentKey: 'k1' } });
    const manifests = path.join(cache.entryDir(id), 'manifests');
    await rm(manifests, { recursive: true });
    // A hit: served, nothing hashed, nothing recorded (a hook has no time to hash a large folder).
    expect((await cache.read(id))?.dir).toBe(cache.contentDir(id, 'k2'));
    expect(await readdir(manifests).catch(() => [])).toEqual([]);
    // The previous revision's folder still serves a re-save (offline too), and its manifest is recorded then.
    expect(await cache.hasContent(id, 'k1')).toBe(true);
    expect(await readdir(manifests)).toEqual(['k1.json']);
    await appendFile(path.join(cache.contentDir(id, 'k1'), 'SKILL.md'), 'injected');
    expect(await cache.hasContent(id, 'k1')).toBe(false);
    // The current one: recorded by the next fetch that finds it, and protected from then on.
    expect(await cache.hasContent(id, 'k2')).toBe(true);
    await appendFile(path.join(cache.contentDir(id, 'k2'), 'a/b.md'), 'injected');
    expect(await cache.read(id)).toBeUndefined();
    // Manifests follow their content folders out.
    await cache.commitContent(id, 'k3', await stage(cache, { 'SKILL.md': 'three' }));
    await cache.writeMeta(meta(id, 'k3'));
    expect(await readdir(manifests)).toEqual(['k3.json']);
  });

  it('takes a manifest with a malformed entry for no manifest, and records a good one', async () => {
    const cache = await scratchCache();
    const id = 'gh:o/r/p';
    await cache.commitContent(id, 'k1', await stage(cache, { 'SKILL.md': 'one' }));
    await cache.writeMeta(meta(id, 'k1'));
    const manifest = path.join(cache.entryDir(id), 'manifests', 'k1.json');
    for (const files of [
      { 'SKILL.md': null },
      { 'SKILL.md': { size: '3', sha256: 'x', mtimeMs: 1 } },
      { '../../../etc/passwd': { size: 3, sha256: 'x', mtimeMs: 1 } },
      ['SKILL.md'],
    ]) {
      await writeFile(manifest, JSON.stringify({ version: 1, files }));
      expect((await cache.read(id))?.dir, JSON.stringify(files)).toBe(cache.contentDir(id, 'k1'));
      expect(await cache.hasContent(id, 'k1')).toBe(true);
      expect(Object.keys(JSON.parse(await readFile(manifest, 'utf8')).files)).toEqual(['SKILL.md']);
    }
  });

  it('records the hashes its source verified as they are given', async () => {
    const cache = await scratchCache();
    const id = 'hub:acme/kit/s';
    const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
    const dir = await cache.commitContent(
      id,
      'k1',
      await stage(cache, { 'SKILL.md': 'one', 'a/b.md': 'b' }),
      [
        { path: 'SKILL.md', sha256: sha256('one') },
        { path: 'a/b.md', sha256: sha256('b') },
        // Listed by the source but dropped as cruft: not in the folder, not in its manifest.
        { path: 'README.md', sha256: sha256('r') },
      ],
    );
    await cache.writeMeta({ ...meta(id, 'k1'), source: 'hub' });
    expect((await cache.read(id))?.dir).toBe(dir);
    expect(await cache.hasContent(id, 'k1')).toBe(true);
    const manifest = JSON.parse(
      await readFile(path.join(cache.entryDir(id), 'manifests', 'k1.json'), 'utf8'),
    ) as { files: Record<string, { sha256: string }> };
    expect(Object.keys(manifest.files).sort()).toEqual(['SKILL.md', 'a/b.md']);
    expect(manifest.files['SKILL.md']?.sha256).toBe(sha256('one'));
  });

  it('removes the work folders of processes that no longer run', async () => {
    const cache = await scratchCache();
    await mkdir(path.join(cache.root, 'tmp', '999999999-deadbeef'), { recursive: true });
    const mine = await cache.makeTemp();
    expect(await readdir(path.join(cache.root, 'tmp'))).toEqual([path.basename(mine)]);
  });
});
