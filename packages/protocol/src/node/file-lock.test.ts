import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { withFileLock } from './file-lock.js';
import { ResolveError } from './resolve-error.js';

const scratch = () => mkdtemp(path.join(tmpdir(), 'atskills-lock-'));
const missing = (file: string) =>
  readFile(file, 'utf8').then(
    () => false,
    () => true,
  );

describe('withFileLock', () => {
  it('gives every holder its turn, one at a time, and removes the lock after', async () => {
    const lock = path.join(await scratch(), 'f.lock');
    let inside = 0;
    let most = 0;
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        withFileLock(lock, async () => {
          inside++;
          most = Math.max(most, inside);
          await new Promise((r) => setTimeout(r, 2));
          order.push(i);
          inside--;
        }),
      ),
    );
    expect(most).toBe(1);
    expect(order.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(await missing(lock)).toBe(true);
  });

  it('takes over the lock of a process that is gone, and of one held past the stale age', async () => {
    const dir = await scratch();
    const lock = path.join(dir, 'f.lock');
    // A pid that ran and exited: nothing runs under it now (pids are not reused this fast).
    const gone = spawnSync(process.execPath, ['-e', '0']).pid;
    await writeFile(lock, `${gone} ${hostname()} dead\n`);
    expect(await withFileLock(lock, async () => 'ran', { waitMs: 200 })).toBe('ran');
    // A live holder (this process) whose lock is older than the stale age: it died without releasing.
    await writeFile(lock, `${process.pid} ${hostname()} old\n`);
    const past = new Date(Date.now() - 60_000);
    await utimes(lock, past, past);
    expect(await withFileLock(lock, async () => 'ran', { waitMs: 200, staleMs: 30_000 })).toBe('ran');
    expect(await missing(lock)).toBe(true);
  });

  it('fails after waiting for a live holder, naming it, and leaves its lock alone', async () => {
    const lock = path.join(await scratch(), 'f.lock');
    const held = `${process.pid} ${hostname()} live\n`;
    await writeFile(lock, held);
    let ran = false;
    const error = await withFileLock(
      lock,
      async () => {
        ran = true;
      },
      { waitMs: 100 },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResolveError);
    expect((error as ResolveError).code).toBe('conflict');
    expect((error as Error).message).toContain(`process ${process.pid}`);
    expect((error as Error).message).toContain(lock);
    expect(ran).toBe(false);
    expect(await readFile(lock, 'utf8')).toBe(held);
  });
});
