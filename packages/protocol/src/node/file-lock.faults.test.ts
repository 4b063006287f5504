// withFileLock under file system answers this machine does not give: Windows' EPERM for a file being deleted,
// a file server whose clock is behind ours, and a release that races a takeover at the worst moment. The
// answers are injected into node:fs/promises itself (the module file-lock.ts calls) and put back after each
// test.
import fsp from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { withFileLock } from './file-lock.js';
import { type Fs, injectFs as inject, restoreFs } from './fs-inject.test-support.js';
import type { ResolveError } from './resolve-error.js';

let platform: PropertyDescriptor | undefined;

function pretendWindows(): void {
  platform = Object.getOwnPropertyDescriptor(process, 'platform');
  Object.defineProperty(process, 'platform', { ...platform, value: 'win32' });
}

afterEach(() => {
  restoreFs();
  if (platform) Object.defineProperty(process, 'platform', platform);
  platform = undefined;
});

const errno = (code: string, syscall: string, file: string) =>
  Object.assign(new Error(`${code}: ${syscall} '${file}'`), { code, syscall, path: String(file) });
const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));
const scratch = () => fsp.mkdtemp(path.join(tmpdir(), 'atskills-lock-faults-'));

describe('withFileLock, file system faults', () => {
  it('waits on Windows while the lock is being deleted (EPERM), as for a held lock', async () => {
    const lock = path.join(await scratch(), 'f.lock');
    pretendWindows();
    let pending = true;
    setTimeout(() => {
      pending = false;
    }, 150);
    // A deleted file lingers until its last handle closes: creating, linking or opening its name says EPERM.
    inject(
      'open',
      (real) =>
        (async (file: string, ...rest: unknown[]) => {
          if (pending && file === lock) throw errno('EPERM', 'open', file);
          return (real as (...a: unknown[]) => unknown)(file, ...rest);
        }) as Fs['open'],
    );
    inject(
      'link',
      (real) =>
        (async (from: string, to: string) => {
          if (pending && to === lock) throw errno('EPERM', 'link', to);
          return real(from, to);
        }) as Fs['link'],
    );
    expect(await withFileLock(lock, async () => 'ran', { waitMs: 2_000 })).toBe('ran');
  });

  it('takes the lock when NFS answers EEXIST to a retransmitted link that had succeeded', async () => {
    const lock = path.join(await scratch(), 'f.lock');
    // The first link lands, and its retry is what the client hears: "the name exists".
    inject(
      'link',
      (real) =>
        (async (from: string, to: string) => {
          await real(from, to);
          throw errno('EEXIST', 'link', to);
        }) as Fs['link'],
    );
    const started = Date.now();
    expect(await withFileLock(lock, async () => 'ran', { waitMs: 2_000 })).toBe('ran');
    expect(Date.now() - started).toBeLessThan(1_000);
    await expect(fsp.stat(lock)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('fails on Windows past the wait, naming the lock and why it could not be read', async () => {
    const lock = path.join(await scratch(), 'f.lock');
    await fsp.writeFile(lock, `${process.pid} ${hostname()} live\n`);
    pretendWindows();
    inject(
      'open',
      (real) =>
        (async (file: string, ...rest: unknown[]) => {
          if (file === lock) throw errno('EBUSY', 'open', file);
          return (real as (...a: unknown[]) => unknown)(file, ...rest);
        }) as Fs['open'],
    );
    const started = Date.now();
    const error = await withFileLock(lock, async () => {}, { waitMs: 200 }).catch((e: ResolveError) => e);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect((error as ResolveError).code).toBe('conflict');
    expect((error as ResolveError).message).toContain(`The lock ${lock} is held and cannot be read (EBUSY)`);
  });

  it('never removes, on release, the lock another holder took over meanwhile', async () => {
    const lock = path.join(await scratch(), 'f.lock');
    // A's release is caught between checking that the lock is its own and removing it; B, finding A's lock
    // past its stale age, tries to take it over right then.
    let armed = false;
    let entered: () => void = () => {};
    const bEntered = new Promise<void>((r) => {
      entered = r;
    });
    let b: Promise<string> | undefined;
    inject(
      'unlink',
      (real) =>
        (async (file: string) => {
          if (armed && file === lock) {
            armed = false;
            b = withFileLock(
              lock,
              async () => {
                entered();
                await delay(100);
                // Still B's lock, after A's release is long done.
                return fsp.readFile(lock, 'utf8').catch(() => 'missing');
              },
              { staleMs: 1, waitMs: 5_000 },
            );
            await Promise.race([bEntered, delay(200)]);
          }
          return real(file);
        }) as Fs['unlink'],
    );
    await withFileLock(lock, async () => {
      await delay(5);
      armed = true;
    });
    expect(b).toBeDefined();
    expect(await b).toMatch(new RegExp(`^${process.pid} ${hostname()} `));
  });

  it("judges a lock's age by the clock that stamped it (a file server behind ours is no stale lock)", async () => {
    const dir = await scratch();
    const lock = path.join(dir, 'f.lock');
    const held = `${process.pid} ${hostname()} live\n`;
    await fsp.writeFile(lock, held);
    // The server's clock is a minute behind: every mtime it stamps is a minute old by ours.
    const behind = <S extends { mtimeMs: number }>(stat: S) =>
      Object.assign(stat, { mtimeMs: stat.mtimeMs - 60_000 });
    inject(
      'lstat',
      (real) =>
        (async (file: string, ...rest: unknown[]) => {
          const stat = await (real as (...a: unknown[]) => Promise<{ mtimeMs: number }>)(file, ...rest);
          return String(file).startsWith(dir) ? behind(stat) : stat;
        }) as Fs['lstat'],
    );
    inject(
      'open',
      (real) =>
        (async (file: string, ...rest: unknown[]) => {
          const handle = await (real as (...a: unknown[]) => Promise<Awaited<ReturnType<Fs['open']>>>)(
            file,
            ...rest,
          );
          if (String(file).startsWith(dir)) {
            const stat = handle.stat.bind(handle) as () => Promise<{ mtimeMs: number }>;
            handle.stat = (async () => behind(await stat())) as typeof handle.stat;
          }
          return handle;
        }) as Fs['open'],
    );
    const error = await withFileLock(lock, async () => 'ran', { waitMs: 100, staleMs: 30_000 }).catch(
      (e: ResolveError) => e,
    );
    expect((error as ResolveError).code).toBe('conflict');
    expect(await fsp.readFile(lock, 'utf8')).toBe(held);
  });
});
