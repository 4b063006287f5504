import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readlinkSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { withFileLock } from './file-lock.js';
import { ResolveError } from './resolve-error.js';

const scratch = () => mkdtemp(path.join(tmpdir(), 'atskills-lock-'));
const missing = (file: string) =>
  readFile(file, 'utf8').then(
    () => false,
    () => true,
  );
const here = path.dirname(fileURLToPath(import.meta.url));
const tsx = path.join(here, '../../../../node_modules/.bin/tsx');
/** A pid that ran and exited: nothing runs under it now (pids are not reused this fast). */
const deadPid = () => spawnSync(process.execPath, ['-e', '0']).pid;
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error as ResolveError,
  );

function run(command: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

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
    await writeFile(lock, `${deadPid()} ${hostname()} dead\n`);
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

  it("loses no edit when processes race to take over a dead holder's lock", async () => {
    // Six processes, each adding 1 fifteen times and dying holding the lock two turns in three: before the
    // takeover was guarded, two takers of one dead lock both got in (the slower one deleting the faster
    // one's fresh lock) and the counter lost updates in most runs.
    const workers = 6;
    const turns = 15;
    const dir = await scratch();
    const [lock, counter, go] = ['f.lock', 'counter', 'go'].map((f) => path.join(dir, f)) as [
      string,
      string,
      string,
    ];
    await writeFile(counter, '0');
    const dead = deadPid();
    await writeFile(lock, `${dead} ${hostname()} dead\n`);
    let exited = 0;
    const children = Array.from({ length: workers }, () =>
      run(tsx, [
        path.join(here, 'file-lock-worker.test-support.ts'),
        lock,
        counter,
        go,
        String(turns),
        String(dead),
      ]).finally(() => exited++),
    );
    // All start at once: each says it is ready, then waits for `go`.
    while ((await readdir(dir)).filter((f) => f.startsWith('go.ready-')).length < workers && !exited)
      await new Promise((r) => setTimeout(r, 10));
    await writeFile(go, '');
    for (const child of await Promise.all(children)) expect(child.code, child.stderr).toBe(0);
    expect(Number(await readFile(counter, 'utf8'))).toBe(workers * turns);
    // The last turns released the lock: nothing left behind, no guard, no temporary file.
    expect((await readdir(dir)).filter((f) => f.startsWith('f.lock'))).toEqual([]);
  }, 30_000);

  it('never shows a lock without its holder, so a lock is never judged without one', async () => {
    const lock = path.join(await scratch(), 'f.lock');
    // A thread reading the lock as fast as it can while holders come and go (the old create-then-write
    // showed it empty now and then).
    const stop = new Int32Array(new SharedArrayBuffer(4));
    const watcher = new Worker(
      `const { readFileSync } = require('node:fs');
const { parentPort, workerData } = require('node:worker_threads');
const seen = new Set();
while (Atomics.load(workerData.stop, 0) === 0) {
  try { seen.add(readFileSync(workerData.lock, 'utf8')); } catch {}
}
parentPort.postMessage([...seen]);`,
      { eval: true, workerData: { lock, stop } },
    );
    const seen = new Promise<string[]>((resolve) => watcher.once('message', resolve));
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = 0; i < 40; i++) await withFileLock(lock, async () => {});
      }),
    );
    Atomics.store(stop, 0, 1);
    const texts = await seen;
    await watcher.terminate();
    expect(texts.length).toBeGreaterThan(0);
    expect(texts.filter((text) => !text.startsWith(`${process.pid} ${hostname()} `))).toEqual([]);
  });

  it('names no holder it does not know: an empty lock says so, and when it will be taken over', async () => {
    const lock = path.join(await scratch(), 'f.lock');
    await writeFile(lock, '');
    const error = await failure(withFileLock(lock, async () => {}, { waitMs: 50, staleMs: 30_000 }));
    expect(error.code).toBe('conflict');
    expect(error.message).toContain(`The lock ${lock} names no holder`);
    expect(error.message).toMatch(/taken over 30 s from now/);
    expect(await readFile(lock, 'utf8')).toBe('');
  });

  it.runIf(existsSync('/proc/self/ns/pid'))(
    'leaves alone a lock of another pid namespace that shares our host name',
    async () => {
      const lock = path.join(await scratch(), 'f.lock');
      // Another container with our host name: its pid means nothing here, whether or not it runs here.
      const other = `${deadPid()} ${hostname()} theirs pid:[1]\n`;
      await writeFile(lock, other);
      expect((await failure(withFileLock(lock, async () => {}, { waitMs: 50 }))).code).toBe('conflict');
      expect(await readFile(lock, 'utf8')).toBe(other);
      // Ours: taken over as before.
      const ns = readlinkSync('/proc/self/ns/pid');
      await writeFile(lock, `${deadPid()} ${hostname()} ours ${ns}\n`);
      expect(await withFileLock(lock, async () => 'ran', { waitMs: 50 })).toBe('ran');
    },
  );

  it('fails at once, naming the lock, when an abandoned lock cannot be removed', async () => {
    const dir = await scratch();
    const lock = path.join(dir, 'f.lock');
    // Not a file: unlink says EISDIR, as it says EPERM to a taker who may not delete another user's lock.
    await mkdir(lock);
    const past = new Date(Date.now() - 120_000);
    await utimes(lock, past, past);
    const started = Date.now();
    const error = await failure(withFileLock(lock, async () => {}, { waitMs: 5_000 }));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(error.code).toBe('conflict');
    expect(error.message).toContain(
      `The abandoned lock ${lock} (an unknown holder, 120 s old) cannot be removed`,
    );
    expect((await readdir(dir)).sort()).toEqual(['f.lock']);
  });

  it.runIf(process.getuid?.() === 0 && existsSync('/usr/bin/setpriv'))(
    'does not spin on an old lock of another user in a shared (sticky) folder: it fails naming the lock',
    async () => {
      const dir = await scratch();
      const shared = path.join(dir, 'shared');
      await mkdir(shared);
      await chmod(dir, 0o755);
      await chmod(shared, 0o1777);
      const lock = path.join(shared, 'f.lock');
      await writeFile(lock, `1 elsewhere x\n`);
      const past = new Date(Date.now() - 120_000);
      await utimes(lock, past, past);
      const script = path.join(dir, 'take.mts');
      await writeFile(
        script,
        `import { withFileLock } from ${JSON.stringify(path.join(here, 'file-lock.ts'))};
const started = Date.now();
const timer = setTimeout(() => { console.error('still waiting after 4 s'); process.exit(3); }, 4000);
try { await withFileLock(${JSON.stringify(lock)}, async () => {}, { waitMs: 500 }); console.error('ran'); process.exit(4); }
catch (e) { clearTimeout(timer); console.error(Date.now() - started, e.message); }
`,
      );
      await chmod(script, 0o644);
      const result = await run('/usr/bin/setpriv', [
        '--reuid=nobody',
        '--regid=nogroup',
        '--clear-groups',
        tsx,
        script,
      ]);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain(`The abandoned lock ${lock} (process 1 on elsewhere, `);
      expect(result.stderr).toMatch(/, 1[23]\d s old\) cannot be removed \(EPERM/);
    },
  );
});
