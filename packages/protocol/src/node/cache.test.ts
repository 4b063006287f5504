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

  it('trusts a folder cached before manifests on a hit (recording one), and a fetch verifies it first', async () => {
    const cache = await scratchCache();
    const id = 'gh:o/r/p';
    await cache.commitContent(id, 'k1', await stage(cache, { 'SKILL.md': 'one' }));
    await cache.writeMeta(meta(id, 'k1'));
    const manifests = path.join(cache.entryDir(id), 'manifests');
    await rm(manifests, { recursive: true });
    expect(await cache.hasContent(id, 'k1')).toBe(false);
    expect(await cache.read(id)).toBeDefined();
    expect(await readdir(manifests)).toEqual(['k1.json']);
    expect(await cache.hasContent(id, 'k1')).toBe(true);
    // Manifests follow their content folders out.
    await cache.commitContent(id, 'k2', await stage(cache, { 'SKILL.md': 'two' }));
    await cache.writeMeta(meta(id, 'k2'));
    expect(await readdir(manifests)).toEqual(['k2.json']);
  });

  it('removes the work folders of processes that no longer run', async () => {
    const cache = await scratchCache();
    await mkdir(path.join(cache.root, 'tmp', '999999999-deadbeef'), { recursive: true });
    const mine = await cache.makeTemp();
    expect(await readdir(path.join(cache.root, 'tmp'))).toEqual([path.basename(mine)]);
  });
});
