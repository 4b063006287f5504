import { randomBytes } from 'node:crypto';
import { lstat, open, readFile, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { isAlive } from './cache.js';
import { isMissing } from './fs-tree.js';
import { ResolveError } from './resolve-error.js';

/** How a lock is waited for. */
export interface FileLockOptions {
  /** Longest wait for another holder (ms); past it the edit fails saying who holds the lock. */
  waitMs?: number;
  /** A lock older than this is a crashed holder's, whatever its pid says (its pid may have been reused). */
  staleMs?: number;
}

// An edit of one small file holds the lock for milliseconds: a second of waiting is already a queue of
// hundreds of editors, and half a minute is a holder that died without its exit handlers.
const WAIT_MS = 10_000;
const STALE_MS = 30_000;

/**
 * Runs `work` holding the lock file `lockPath`, created with O_EXCL (atomic on Linux, macOS and Windows,
 * local file systems and NFSv3+ alike), so that read-modify-write edits of one file by several processes (and
 * by several calls of one process) take turns instead of losing each other's changes. The file names its
 * holder (pid, host, a random token); a lock whose holder is gone (same host, pid not running) or that is
 * older than `staleMs` is taken over. Released (only if still ours) when `work` settles.
 */
export async function withFileLock<T>(
  lockPath: string,
  work: () => Promise<T>,
  options: FileLockOptions = {},
): Promise<T> {
  const token = `${process.pid} ${hostname()} ${randomBytes(8).toString('hex')}\n`;
  const deadline = Date.now() + (options.waitMs ?? WAIT_MS);
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await open(lockPath, 'wx');
      try {
        await handle.writeFile(token);
      } finally {
        await handle.close();
      }
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = await readHolder(lockPath);
    if (!holder) continue; // released between our attempt and the read
    if (await isStale(holder, options.staleMs ?? STALE_MS)) {
      // Removed only if it is still that holder's lock: another taker may have replaced it meanwhile.
      if ((await readHolder(lockPath))?.text === holder.text) await unlink(lockPath).catch(() => {});
      continue;
    }
    if (Date.now() >= deadline) {
      const who = holder.pid ? ` (process ${holder.pid}${holder.host ? ` on ${holder.host}` : ''})` : '';
      throw new ResolveError(
        'conflict',
        `Another atskills is editing the same file${who}; nothing was changed. Try again, or delete ${lockPath} if no atskills is running.`,
      );
    }
    // Jittered, growing waits: editors that collided do not collide again in step.
    await new Promise((r) => setTimeout(r, Math.min(5 + attempt * 5, 50) * (0.5 + Math.random())));
  }
  try {
    return await work();
  } finally {
    try {
      if ((await readFile(lockPath, 'utf8')) === token) await unlink(lockPath);
    } catch {
      // Gone already (taken over as stale): nothing of ours to remove.
    }
  }
}

interface Holder {
  text: string;
  pid?: number;
  host?: string;
  mtimeMs: number;
}

/** The lock file's holder, or undefined when it is gone (released between our attempt and this read). */
async function readHolder(lockPath: string): Promise<Holder | undefined> {
  try {
    const [text, stat] = await Promise.all([readFile(lockPath, 'utf8'), lstat(lockPath)]);
    const [pid, host] = text.trim().split(' ');
    return {
      text,
      ...(Number.isInteger(Number(pid)) && Number(pid) > 0 ? { pid: Number(pid) } : {}),
      ...(host ? { host } : {}),
      mtimeMs: stat.mtimeMs,
    };
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

async function isStale(holder: Holder, staleMs: number): Promise<boolean> {
  if (Date.now() - holder.mtimeMs > staleMs) return true;
  // A lock being written (created, its text not in yet) has no pid to judge: it is fresh.
  if (holder.pid === undefined || holder.host !== hostname()) return false;
  return holder.pid !== process.pid && !(await isAlive(holder.pid));
}
