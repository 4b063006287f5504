// What a cache hit and a commit cost, counted rather than timed: which files are read, and whether the event
// loop runs while a hit checks its files (a hook's deadline timer and sockets wait otherwise).
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type CacheEntryMeta, SkillCache } from './cache.js';
import { type Fs, injectFs, restoreFs } from './fs-inject.test-support.js';

afterEach(restoreFs);

const id = 'hub:acme/kit/big';
const files = (n: number) =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`d${i % 5}/f${i}.md`, `file ${i}\n`]));

async function filled(n: number): Promise<{ cache: SkillCache; staged: string }> {
  const cache = new SkillCache(
    await mkdtemp(path.join(tmpdir(), 'atskills-cache-cost-')),
    () => 'https://hub',
  );
  const staged = await cache.makeTemp();
  for (const [rel, text] of Object.entries({ 'SKILL.md': 'skill\n', ...files(n) })) {
    await mkdir(path.dirname(path.join(staged, rel)), { recursive: true });
    await writeFile(path.join(staged, rel), text);
  }
  return { cache, staged };
}

function meta(contentKey: string): CacheEntryMeta {
  const now = new Date().toISOString();
  return {
    version: 1,
    identity: id,
    source: 'hub',
    kind: 'skill',
    revision: contentKey,
    fetchedAt: now,
    checkedAt: now,
    contentKey,
  };
}

/** Counts the files under `root` opened or read whole from now on. */
function countReads(root: string): { count: number } {
  const seen = { count: 0 };
  const counting = <K extends 'open' | 'readFile'>(name: K) =>
    injectFs(
      name,
      (real) =>
        ((file: unknown, ...rest: unknown[]) => {
          if (
            typeof file === 'string' &&
            file.startsWith(root) &&
            !file.includes(`${path.sep}manifests${path.sep}`)
          )
            seen.count++;
          return (real as (...a: unknown[]) => unknown)(file, ...rest);
        }) as Fs[K],
    );
  counting('open');
  counting('readFile');
  return seen;
}

describe('SkillCache costs', () => {
  it('reads each file once to commit it, and not at all when its source verified its hash', async () => {
    const { cache, staged } = await filled(30);
    const reads = countReads(cache.root);
    await cache.commitContent(id, 'k1', staged);
    expect(reads.count).toBe(31);
    const again = await filled(30);
    const verified = Object.entries({ 'SKILL.md': 'skill\n', ...files(30) }).map(([rel, text]) => ({
      path: rel,
      sha256: createHash('sha256').update(text).digest('hex'),
    }));
    const none = countReads(again.cache.root);
    await again.cache.commitContent(id, 'k1', again.staged, verified);
    expect(none.count).toBe(0);
  });

  it('reads no file on a hit, and only the file whose mtime moved', async () => {
    const { cache, staged } = await filled(30);
    const dir = await cache.commitContent(id, 'k1', staged);
    await cache.writeMeta(meta('k1'));
    const reads = countReads(cache.root);
    expect((await cache.read(id))?.dir).toBe(dir);
    expect(reads.count).toBe(0);
    const later = new Date(Date.now() + 5_000);
    await utimes(path.join(dir, 'd1/f1.md'), later, later);
    expect((await cache.read(id))?.dir).toBe(dir);
    expect(reads.count).toBe(1);
    // Remembered: the next hit reads nothing again.
    expect((await cache.read(id))?.dir).toBe(dir);
    expect(reads.count).toBe(1);
  });

  it('lets the event loop run while a hit checks a large folder', async () => {
    const { cache, staged } = await filled(1_000);
    await cache.commitContent(id, 'k1', staged);
    await cache.writeMeta(meta('k1'));
    let turns = 0;
    let checking = true;
    const tick = () => {
      turns++;
      if (checking) setImmediate(tick);
    };
    setImmediate(tick);
    expect(await cache.read(id)).toBeDefined();
    checking = false;
    // A thousand stats in one go kept every timer and socket of a hook waiting; now it yields between slices.
    expect(turns).toBeGreaterThanOrEqual(5);
  });
});
