import { createHash, randomBytes } from 'node:crypto';
import { constants, lstatSync, readFileSync } from 'node:fs';
import { lstat, mkdir, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { MenuItem } from '../menu.js';
import { isMissing, makeDirectory } from './fs-tree.js';
import type { ClientSettings } from './settings.js';

/** What the cache knows about one identity (stored as entry.json next to its content). */
export interface CacheEntryMeta {
  version: 1;
  identity: string;
  source: 'gh' | 'hub';
  kind: 'skill' | 'menu';
  /** Upstream revision (gh: commit sha of the default branch; hub: the collection revision). */
  revision: string;
  /** ISO time of the fetch that produced this revision. */
  fetchedAt: string;
  /** ISO time the revision was last confirmed by a probe. */
  checkedAt: string;
  /** The validator sent back on the next probe (hub: the ETag). */
  etag?: string;
  name?: string;
  description?: string;
  /** Skills: the content folder's key (gh: the sub-tree sha, so commits elsewhere in the repo reuse it). */
  contentKey?: string;
  /** Menus: the rows. */
  items?: MenuItem[];
  /**
   * The hub's safety flag codes that hold for this revision (X-Skill-Flags; accepted disputes left out), kept
   * so a cached or stale answer still carries them (SPEC 2.8). Absent: the source names none (`gh:` over git).
   */
  flags?: string[];
  /**
   * What the hub says of this revision's state that a reader should hear (`files-left-out`: files the crawl
   * did not download; `link-stale`: a team link's last good revision), from its last full answer.
   */
  hubWarnings?: string[];
  /** The revision served before this one, kept so a re-save can compare against it without a fetch. */
  previous?: { revision: string; contentKey: string };
  /** The hub's flags heard on other revisions (a saved copy's; `gh:` keyed by tree sha), by revision. */
  verdicts?: Record<string, string[]>;
  /** Where the entry was fetched from (the hub's URL, the git base): stamped by `writeMeta`. */
  origin?: string;
}

/**
 * Where one identity's copy comes from. The cache is keyed by it with the identity: a `hub:` identity names
 * a skill of one hub, and another hub's skill of the same name is another skill.
 */
export type OriginOf = (identity: string) => string;

/** A cache hit: the metadata and, for a skill, the folder holding its files. */
export interface CachedEntry {
  meta: CacheEntryMeta;
  dir?: string;
}

const META_FILE = 'entry.json';
/** `entries/<hash>/manifests/<content key>.json`: what each content folder held when it entered the cache. */
const MANIFESTS = 'manifests';

/**
 * A content folder's files as they entered the cache (after the source's own checks: the hub's sha256 per
 * file, git's tree): size and sha256 to verify them, and the mtime that lets a read check them by one stat
 * each instead of hashing them.
 */
interface ContentManifest {
  version: 1;
  files: Record<string, ManifestFile>;
}
interface ManifestFile {
  size: number;
  sha256: string;
  mtimeMs: number;
}

/** A file's sha256 (hex) that its source already checked, by its path in the folder ('/'-separated). */
export interface VerifiedFile {
  path: string;
  sha256: string;
}

// Files hashed at once: enough to keep libuv's four threads and the disk busy, few open files.
const PARALLEL = 16;
// Files statted between two turns of the event loop on a cache hit: about half a millisecond.
const STAT_SLICE = 128;
// Repository cruft that never lands in the cache (SPEC 1.4), matched at the top of a skill folder.
const CRUFT = /^(?:readme|license|licence|copying|notice)(?:[.-][^/]*)?$/i;

/** Whether a path relative to a skill folder is cruft that must stay out of the cache. */
export function isCruft(relPath: string): boolean {
  const segments = relPath.split('/');
  if (segments.includes('.git')) return true;
  return segments.length === 1 && CRUFT.test(segments[0] ?? '');
}

/** The cache of a client with these settings: `hub:` copies by the hub's URL, `gh:` ones by the git base. */
export function clientCache(settings: Pick<ClientSettings, 'cacheDir' | 'hubUrl' | 'gitBase'>): SkillCache {
  return new SkillCache(settings.cacheDir, (identity) =>
    identity.startsWith('hub:') ? settings.hubUrl : settings.gitBase,
  );
}

/**
 * The machine-wide validating cache (SPEC 1.4). Layout: `entries/<hash of identity>/entry.json` plus
 * `content/<key>/` folders that are immutable once renamed into place, and `tmp/<pid>-<random>/` work
 * folders. Every write goes to a temporary path first and is renamed in, so two processes resolving the
 * same identity at once never see a half-written entry, and a killed client leaves only a tmp folder that
 * the next client removes.
 */
export class SkillCache {
  constructor(
    readonly root: string,
    private readonly originOf: OriginOf,
  ) {}

  /** The folder of one identity's entry (from its origin). */
  entryDir(identity: string): string {
    const key = createHash('sha256')
      .update(`${this.originOf(identity)}\n${identity}`)
      .digest('hex')
      .slice(0, 32);
    return path.join(this.root, 'entries', key);
  }

  /** The immutable content folder of one identity at one content key. */
  contentDir(identity: string, contentKey: string): string {
    return path.join(this.entryDir(identity), 'content', contentKey);
  }

  /** The entry's metadata alone, read synchronously (undefined when there is none or it is not ours). */
  readMeta(identity: string): CacheEntryMeta | undefined {
    let meta: CacheEntryMeta;
    try {
      // Synchronous: one small file on every cloud resolve, the client's start-up path.
      meta = JSON.parse(
        readFileSync(path.join(this.entryDir(identity), META_FILE), 'utf8'),
      ) as CacheEntryMeta;
    } catch (error) {
      if (isMissing(error) || error instanceof SyntaxError) return undefined;
      throw error;
    }
    return meta.version === 1 && meta.identity === identity && meta.origin === this.originOf(identity)
      ? meta
      : undefined;
  }

  /**
   * The cached entry, or undefined when there is none, or its content has gone missing or no longer holds
   * what entered the cache (then it is fetched again, as if it had never been cached).
   */
  async read(identity: string): Promise<CachedEntry | undefined> {
    const meta = this.readMeta(identity);
    if (!meta) return undefined;
    if (meta.kind === 'menu') return { meta };
    if (!meta.contentKey) return undefined;
    const dir = this.contentDir(identity, meta.contentKey);
    return (await this.contentIntact(identity, meta.contentKey, 'quick')) ? { meta, dir } : undefined;
  }

  /**
   * Whether a content folder is present and holds exactly the files that entered the cache (every file
   * hashed): a fetch that finds its content key here reuses the folder only then, else it downloads again
   * and `commitContent` replaces the folder. A folder cached before manifests is trusted, as it always was,
   * and its manifest recorded now.
   */
  async hasContent(identity: string, contentKey: string): Promise<boolean> {
    return this.contentIntact(identity, contentKey, 'full');
  }

  /**
   * Checks a content folder against its manifest. `quick` (every cache hit) compares each file's size and
   * mtime, one stat each, and hashes only the files whose mtime moved with their size unchanged (a copied
   * cache); `full` hashes every file (a few at a time in parallel) and looks for files that were not there.
   * A folder without a manifest (cached before manifests, or its manifest unreadable) is trusted as before:
   * a hit never hashes it (a hook has no time for that), a full check records its manifest.
   */
  private async contentIntact(
    identity: string,
    contentKey: string,
    depth: 'quick' | 'full',
  ): Promise<boolean> {
    const dir = this.contentDir(identity, contentKey);
    if (!(await isDirectory(dir))) return false;
    const manifest = this.readManifest(identity, contentKey);
    if (!manifest) {
      if (depth === 'full') await this.rememberManifest(identity, contentKey, await manifestOf(dir));
      return true;
    }
    if (depth === 'full') {
      const actual = await manifestOf(dir);
      if (!sameFiles(actual, manifest)) return false;
      if (!sameStats(actual, manifest)) await this.rememberManifest(identity, contentKey, actual);
      return true;
    }
    const moved: string[] = [];
    const names = Object.keys(manifest.files);
    for (let start = 0; start < names.length; start += STAT_SLICE) {
      // Synchronous stats, a slice at a time, the event loop let through between slices: a third of the
      // time of as many async stats, and a hook's timers and sockets never wait more than a slice.
      if (start > 0) await new Promise((r) => setImmediate(r));
      for (const rel of names.slice(start, start + STAT_SLICE)) {
        let stat: ReturnType<typeof lstatSync>;
        try {
          stat = lstatSync(path.join(dir, rel));
        } catch (error) {
          if (isMissing(error)) return false;
          throw error;
        }
        const want = manifest.files[rel]!;
        if (!stat.isFile() || stat.size !== want.size) return false;
        if (stat.mtimeMs !== want.mtimeMs) moved.push(rel);
      }
    }
    if (moved.length === 0) return true;
    const rehashed = await inParallel(
      moved,
      async (rel) => [rel, await hashFile(path.join(dir, rel))] as const,
    );
    const files = { ...manifest.files };
    for (const [rel, now] of rehashed) {
      if (!now || now.sha256 !== files[rel]!.sha256 || now.size !== files[rel]!.size) return false;
      files[rel] = now;
    }
    // Same bytes, new mtimes (a copied or restored cache): remember them so the next hit is one stat again.
    await this.rememberManifest(identity, contentKey, { version: 1, files });
    return true;
  }

  /** Records a manifest found on a read; a cache this user may only read is still served, checked each time. */
  private async rememberManifest(
    identity: string,
    contentKey: string,
    manifest: ContentManifest,
  ): Promise<void> {
    try {
      await this.writeManifest(identity, contentKey, manifest);
    } catch {
      // Not writable: the next read computes it again.
    }
  }

  private manifestPath(identity: string, contentKey: string): string {
    return path.join(this.entryDir(identity), MANIFESTS, `${contentKey}.json`);
  }

  /** The folder's manifest; undefined when there is none or it is not one (a malformed entry included). */
  private readManifest(identity: string, contentKey: string): ContentManifest | undefined {
    let manifest: unknown;
    try {
      manifest = JSON.parse(readFileSync(this.manifestPath(identity, contentKey), 'utf8'));
    } catch (error) {
      if (isMissing(error) || error instanceof SyntaxError) return undefined;
      throw error;
    }
    return isManifest(manifest) ? manifest : undefined;
  }

  private async writeManifest(
    identity: string,
    contentKey: string,
    manifest: ContentManifest,
  ): Promise<void> {
    const file = this.manifestPath(identity, contentKey);
    await makeDirectory(path.dirname(file));
    const temp = `${file}.${process.pid}-${randomBytes(6).toString('hex')}`;
    await writeFile(temp, JSON.stringify(manifest));
    await rename(temp, file);
  }

  /** A fresh private work folder inside the cache (same file system, so rename is atomic). */
  async makeTemp(): Promise<string> {
    const tmpRoot = path.join(this.root, 'tmp');
    await makeDirectory(tmpRoot);
    await this.removeOrphanedTemps(tmpRoot);
    const dir = path.join(tmpRoot, `${process.pid}-${randomBytes(6).toString('hex')}`);
    await mkdir(dir);
    return dir;
  }

  /**
   * Moves a fully written (and verified) folder into place as the content of (identity, contentKey), and
   * records its manifest. `verified` lists the sha256 of files the source already checked (the hub's per-file
   * hashes), which are then not read again; other files are hashed. A folder already there with the same
   * files (another process got there first) is kept and ours dropped; one whose files differ is corrupt and
   * is replaced: moved aside, ours renamed in, so a reader sees the old folder or the new one, never a mix.
   * Returns the final folder.
   */
  async commitContent(
    identity: string,
    contentKey: string,
    tempDir: string,
    verified?: readonly VerifiedFile[],
  ): Promise<string> {
    await sanitizeTree(tempDir);
    const fresh = await manifestOf(tempDir, verified && new Map(verified.map((f) => [f.path, f.sha256])));
    const finalDir = this.contentDir(identity, contentKey);
    await makeDirectory(path.dirname(finalDir));
    // The manifest recorded: ours (a rename keeps every file's mtime), or that of the same content found there.
    let inPlace = fresh;
    for (let attempt = 0; ; attempt++) {
      let failure: unknown;
      try {
        await rename(tempDir, finalDir);
        break;
      } catch (error) {
        // Windows says EPERM where POSIX says the target folder is not empty.
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'EEXIST' && code !== 'ENOTEMPTY' && code !== 'EPERM') throw error;
        failure = error;
      }
      // Undefined: moved aside by another process meanwhile (or the rename failed for another reason).
      const there = (await isDirectory(finalDir)) ? await manifestOf(finalDir) : undefined;
      if (!there && attempt > 0) throw failure;
      if (there && sameFiles(there, fresh)) {
        await rm(tempDir, { recursive: true, force: true });
        inPlace = there;
        break;
      }
      if (attempt >= 3) throw new Error(`${finalDir} keeps changing while it is replaced; try again.`);
      if (there) {
        const aside = path.join(this.root, 'tmp', `${process.pid}-${randomBytes(6).toString('hex')}-corrupt`);
        await makeDirectory(path.dirname(aside));
        await rename(finalDir, aside).catch((error: unknown) => {
          if (!isMissing(error)) throw error;
        });
        await rm(aside, { recursive: true, force: true });
      }
    }
    await this.writeManifest(identity, contentKey, inPlace);
    return finalDir;
  }

  /** Atomically replaces the entry's metadata, then drops content folders no entry points at any more. */
  async writeMeta(meta: CacheEntryMeta): Promise<void> {
    const dir = this.entryDir(meta.identity);
    await makeDirectory(dir);
    const temp = path.join(dir, `.${META_FILE}.${process.pid}-${randomBytes(6).toString('hex')}`);
    const stamped: CacheEntryMeta = { ...meta, origin: this.originOf(meta.identity) };
    await writeFile(temp, `${JSON.stringify(stamped, null, 2)}\n`);
    await rename(temp, path.join(dir, META_FILE));
    const keep = new Set([meta.contentKey, meta.previous?.contentKey].filter((k): k is string => !!k));
    for (const [sub, keyOf] of [
      ['content', (name: string) => name],
      [MANIFESTS, (name: string) => name.replace(/\.json$/, '')],
    ] as const) {
      let names: string[] = [];
      try {
        names = await readdir(path.join(dir, sub));
      } catch (error) {
        if (!isMissing(error)) throw error;
      }
      for (const name of names) {
        // A manifest being written (its temporary name) belongs to a kept key as much as the final one.
        if (!keep.has(keyOf(name).replace(/\.json\.\d+-[0-9a-f]+$/, '')))
          await rm(path.join(dir, sub, name), { recursive: true, force: true });
      }
    }
  }

  /** Every entry's metadata, sorted by identity. */
  async list(): Promise<CacheEntryMeta[]> {
    let keys: string[];
    try {
      keys = await readdir(path.join(this.root, 'entries'));
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
    const out: CacheEntryMeta[] = [];
    for (const key of keys) {
      try {
        out.push(JSON.parse(await readFile(path.join(this.root, 'entries', key, META_FILE), 'utf8')));
      } catch {
        // An entry whose metadata was never completed is not an entry.
      }
    }
    return out.sort((a, b) => (a.identity < b.identity ? -1 : a.identity > b.identity ? 1 : 0));
  }

  /** Removes every entry and work folder; returns how many entries there were. */
  async clear(): Promise<number> {
    const count = (await this.list()).length;
    await rm(path.join(this.root, 'entries'), { recursive: true, force: true });
    await rm(path.join(this.root, 'tmp'), { recursive: true, force: true });
    return count;
  }

  /**
   * Work folders of processes that no longer run (killed mid-fetch) are garbage; so is any work folder
   * older than a day (its pid may have been reused by an unrelated process).
   */
  private async removeOrphanedTemps(tmpRoot: string): Promise<void> {
    for (const name of await readdir(tmpRoot)) {
      const pid = Number(name.split('-')[0]);
      const full = path.join(tmpRoot, name);
      let old = false;
      try {
        old = Date.now() - (await lstat(full)).mtimeMs > ORPHAN_AGE_MS;
      } catch (error) {
        if (isMissing(error)) continue;
        throw error;
      }
      if (old || (Number.isInteger(pid) && pid > 0 && !(await isAlive(pid)))) {
        await rm(full, { recursive: true, force: true });
      }
    }
  }
}

const ORPHAN_AGE_MS = 24 * 60 * 60 * 1000;

async function isDirectory(dir: string): Promise<boolean> {
  try {
    return (await lstat(dir)).isDirectory();
  } catch (error) {
    if (isMissing(error)) return false;
    throw error;
  }
}

/**
 * The manifest of a folder as it is now: every file's size, sha256 and mtime (a link or special file, which
 * cannot be in a committed folder, is listed by its type: there now, it is a change). Files are hashed a few
 * at a time in parallel, except those whose sha256 `verified` gives.
 */
async function manifestOf(dir: string, verified?: ReadonlyMap<string, string>): Promise<ContentManifest> {
  const entries = (await listFolder(dir)).filter((e) => e.type !== 'dir');
  const files: ContentManifest['files'] = {};
  const found = await inParallel(entries, async (entry) => {
    const full = path.join(dir, entry.path);
    const known = entry.type === 'file' ? verified?.get(entry.path) : entry.type;
    if (known !== undefined) {
      const stat = await lstat(full);
      return [entry.path, { size: stat.size, sha256: known, mtimeMs: stat.mtimeMs }] as const;
    }
    // Undefined: gone since it was listed (a folder changing as it is read), which no manifest matches.
    return [entry.path, (await hashFile(full)) ?? { size: -1, sha256: 'missing', mtimeMs: 0 }] as const;
  });
  for (const [rel, file] of found) files[rel] = file;
  return { version: 1, files };
}

/** One file's size, sha256 and mtime, read through one handle (undefined when it is gone). */
async function hashFile(full: string): Promise<ManifestFile | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    // A file replaced since it was listed by a link is not followed (ELOOP), by a FIFO does not block.
    handle = await open(full, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    if (isMissing(error)) return undefined;
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') return { size: -1, sha256: 'symlink', mtimeMs: 0 };
    throw error;
  }
  try {
    const stat = await handle.stat();
    const sha256 = createHash('sha256')
      .update(await handle.readFile())
      .digest('hex');
    return { size: stat.size, sha256, mtimeMs: stat.mtimeMs };
  } finally {
    await handle.close();
  }
}

/** Every entry under `root` ('/'-separated paths, links not followed), its folders read in parallel. */
async function listFolder(
  root: string,
): Promise<{ path: string; type: 'file' | 'dir' | 'symlink' | 'other' }[]> {
  const out: { path: string; type: 'file' | 'dir' | 'symlink' | 'other' }[] = [];
  const visit = async (rel: string): Promise<void> => {
    const children = await readdir(rel === '' ? root : path.join(root, rel), { withFileTypes: true });
    const folders: string[] = [];
    for (const child of children) {
      const childRel = rel === '' ? child.name : `${rel}/${child.name}`;
      const type = child.isSymbolicLink()
        ? 'symlink'
        : child.isDirectory()
          ? 'dir'
          : child.isFile()
            ? 'file'
            : 'other';
      out.push({ path: childRel, type });
      if (type === 'dir') folders.push(childRel);
    }
    await Promise.all(folders.map(visit));
  };
  await visit('');
  return out;
}

/** Runs `work` on every item, at most PARALLEL at once; the results in the items' order. */
async function inParallel<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL, items.length) }, lane));
  return results;
}

/** Whether parsed JSON is a manifest, every entry well-formed (a path inside the folder, size, sha256, mtime). */
function isManifest(value: unknown): value is ContentManifest {
  const manifest = value as ContentManifest | null;
  if (manifest?.version !== 1 || typeof manifest.files !== 'object' || manifest.files === null) return false;
  if (Array.isArray(manifest.files)) return false;
  return Object.entries(manifest.files).every(
    ([rel, file]) =>
      rel !== '' &&
      !rel.startsWith('/') &&
      !rel.split(/[\\/]/).some((segment) => segment === '..' || segment === '') &&
      typeof file === 'object' &&
      file !== null &&
      typeof file.size === 'number' &&
      typeof file.sha256 === 'string' &&
      typeof file.mtimeMs === 'number',
  );
}

/** Whether two manifests list the same files with the same mtimes (so the recorded one is still current). */
function sameStats(a: ContentManifest, b: ContentManifest): boolean {
  return Object.entries(a.files).every(([name, file]) => b.files[name]?.mtimeMs === file.mtimeMs);
}

/** Whether two manifests list the same files with the same bytes (mtimes aside). */
function sameFiles(a: ContentManifest, b: ContentManifest): boolean {
  const names = Object.keys(a.files);
  if (names.length !== Object.keys(b.files).length) return false;
  return names.every((name) => {
    const x = a.files[name]!;
    const y = b.files[name];
    return y !== undefined && x.size === y.size && x.sha256 === y.sha256;
  });
}

/** Whether a process runs; a zombie (killed, not yet reaped by its parent) does not. */
export async function isAlive(pid: number): Promise<boolean> {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    // Linux: the field after the command name in /proc/<pid>/stat is the state; Z and X are dead.
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) [ZX] /s.test(stat);
  } catch {
    return true;
  }
}

/** Removes symlinks, special files, `.git` and top-level cruft from a folder about to enter the cache. */
export async function sanitizeTree(root: string): Promise<void> {
  const visit = async (rel: string): Promise<void> => {
    const work: Promise<void>[] = [];
    // The entry types come with the listing (no stat per file); folders are walked in parallel.
    for (const child of await readdir(rel === '' ? root : path.join(root, rel), { withFileTypes: true })) {
      const childRel = rel === '' ? child.name : `${rel}/${child.name}`;
      if (isCruft(childRel) || (!child.isDirectory() && !child.isFile()))
        work.push(rm(path.join(root, childRel), { recursive: true, force: true }));
      else if (child.isDirectory()) work.push(visit(childRel));
    }
    await Promise.all(work);
  };
  await visit('');
}
