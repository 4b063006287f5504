import { createHash, randomBytes } from 'node:crypto';
import { constants, readlinkSync } from 'node:fs';
import { link, open, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
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
// Tries that follow a stale lock's removal at once (no wait): enough to win the free lock, never a spin.
const FREE_RETRIES = 3;

/**
 * Runs `work` holding the lock file `lockPath`, so that read-modify-write edits of one file by several
 * processes (and by several calls of one process) take turns instead of losing each other's changes. The
 * lock is a file naming its holder (pid, host, a random token, pid namespace), written under a temporary
 * name and hard-linked into place (link fails when the name exists: atomic on Linux, macOS and Windows,
 * local file systems and NFS alike), so it is never seen empty. A lock whose holder is gone (same host and
 * pid namespace, pid not running) or that is older than `staleMs` is taken over, by one taker only (see
 * `removeIfStill`). Fails past `waitMs` naming the holder, never waiting longer. Released (only if still
 * ours) when `work` settles.
 */
export async function withFileLock<T>(
  lockPath: string,
  work: () => Promise<T>,
  options: FileLockOptions = {},
): Promise<T> {
  const staleMs = options.staleMs ?? STALE_MS;
  const token = tokenText();
  const deadline = Date.now() + (options.waitMs ?? WAIT_MS);
  let holder: Holder | undefined;
  let unreadable: NodeJS.ErrnoException | undefined;
  let freeRetries = FREE_RETRIES;
  for (let attempt = 0; ; attempt++) {
    if (await createExclusive(lockPath, token)) break;
    try {
      holder = await readHolder(lockPath);
      unreadable = undefined;
    } catch (error) {
      // Windows: a lock being deleted (or opened for its deletion) cannot be read; it is as good as held.
      if (!isBusy(error)) throw lockError(lockPath, 'read', error);
      unreadable = error as NodeJS.ErrnoException;
      holder = undefined;
    }
    if (holder && (await isStale(holder, staleMs))) {
      const outcome = await removeIfStill(lockPath, holder, staleMs);
      // Removed, or replaced meanwhile: either way the next try may succeed at once.
      if (outcome !== 'busy' && freeRetries-- > 0) continue;
    }
    if (Date.now() >= deadline) throw heldError(lockPath, holder, unreadable, staleMs);
    // Jittered, growing waits (never past the deadline): editors that collided do not collide again in step.
    const pause = Math.min(5 + attempt * 5, 50) * (0.5 + Math.random());
    await new Promise((r) => setTimeout(r, Math.min(pause, Math.max(1, deadline - Date.now()))));
  }
  try {
    return await work();
  } finally {
    await release(lockPath, token, staleMs);
  }
}

interface Holder {
  text: string;
  pid?: number;
  host?: string;
  /** The holder's pid namespace (Linux): a pid means nothing across namespaces. */
  pidns?: string;
  ino: number;
  mtimeMs: number;
  /** The lock's age by the clock of the file system that stamped it (mtime), not ours. */
  ageMs: number;
}

/** `<pid> <host> <random> <pid namespace>`: who holds a lock, and a token that is this holder's alone. */
function tokenText(): string {
  return `${process.pid} ${hostname()} ${randomBytes(8).toString('hex')} ${pidNamespace() ?? '-'}\n`;
}

let namespace: string | null | undefined;
function pidNamespace(): string | undefined {
  if (namespace === undefined) {
    try {
      // e.g. `pid:[4026531836]`; two containers may share a host name and a project folder, never this.
      namespace = readlinkSync('/proc/self/ns/pid').replace(/\s/g, '');
    } catch {
      namespace = null;
    }
  }
  return namespace ?? undefined;
}

// Where each lock folder's file system clock stands against ours (NFS stamps mtimes by the server's clock).
const clockSkewMs = new Map<string, number>();

/**
 * Creates `file` holding `text` unless the name is taken: written to a temporary file first and linked into
 * place, so the file never exists without its text. Where hard links are not supported (FAT, some network
 * shares) it falls back to an exclusive create and write. False when the name is taken (on Windows also
 * when a file of that name is being deleted); throws, naming the file, when it cannot be made at all.
 */
async function createExclusive(file: string, text: string): Promise<boolean> {
  const temp = `${file}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`;
  try {
    const handle = await open(temp, 'wx');
    try {
      await handle.writeFile(text);
      if (!clockSkewMs.has(path.dirname(file)))
        clockSkewMs.set(path.dirname(file), (await handle.stat()).mtimeMs - Date.now());
    } finally {
      await handle.close();
    }
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw lockError(file, 'create', error);
  }
  try {
    await link(temp, file);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // NFS may retransmit a `link` that succeeded and answer EEXIST to the retry: the temp file then has two
    // names, and the lock is ours (the classic check; else we would wait on ourselves until the deadline).
    if (code === 'EEXIST') return (await stat(temp).catch(() => undefined))?.nlink === 2;
    if (isMissing(error)) throw lockError(file, 'create', error);
  } finally {
    await unlink(temp).catch(() => {});
  }
  // No hard links here (or, on Windows, a lock being deleted: the exclusive create says so as well).
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST' || isBusy(error)) return false;
    throw lockError(file, 'create', error);
  }
  try {
    await handle.writeFile(text);
  } finally {
    await handle.close();
  }
  return true;
}

/** The lock file's holder, or undefined when it is gone (released between our attempt and this read). */
async function readHolder(lockPath: string): Promise<Holder | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    // Non-blocking: a FIFO put in the lock's place must not hang the wait past its deadline.
    handle = await open(lockPath, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
  try {
    // Text and stat from one open file: the holder judged is the holder compared before a removal.
    const stat = await handle.stat();
    const text = stat.isFile() ? await handle.readFile('utf8') : '';
    const [pid, host, , pidns] = text.trim().split(' ');
    return {
      text,
      ...(Number.isInteger(Number(pid)) && Number(pid) > 0 ? { pid: Number(pid) } : {}),
      ...(host ? { host } : {}),
      ...(pidns && pidns !== '-' ? { pidns } : {}),
      ino: stat.ino,
      mtimeMs: stat.mtimeMs,
      ageMs: Date.now() + (clockSkewMs.get(path.dirname(lockPath)) ?? 0) - stat.mtimeMs,
    };
  } finally {
    await handle.close();
  }
}

async function isStale(holder: Holder, staleMs: number): Promise<boolean> {
  if (holder.ageMs > staleMs) return true;
  // A lock being written (fallback without hard links: created, its text not in yet) has no pid: fresh.
  if (holder.pid === undefined || holder.host !== hostname()) return false;
  if ((holder.pidns ?? pidNamespace()) !== pidNamespace()) return false;
  return holder.pid !== process.pid && !(await isAlive(holder.pid));
}

/**
 * Removes the lock file `file` if it is still exactly `holder`'s (same text, same file). Every removal of
 * a lock, a stale one by a taker or one's own on release, first creates `<file>.break-<fingerprint of the
 * holder>` exclusively: so between the check and the unlink no one else removes that holder's lock, and no
 * new lock can appear in its place (the name is taken until the unlink). Two takers of one stale lock
 * cannot both remove it, and a slow taker never removes the lock the faster one made after. A guard left
 * by a taker that died is itself a stale lock, removed the same way. 'busy': another removal is under way.
 */
async function removeIfStill(
  file: string,
  holder: Holder,
  staleMs: number,
  depth = 0,
): Promise<'removed' | 'changed' | 'busy'> {
  const guard = `${stripGuards(file)}.break-${fingerprint(holder)}`;
  if (!(await createExclusive(guard, tokenText()))) {
    const guardHolder = await readHolder(guard).catch(() => undefined);
    // A guard is held for milliseconds: it is stale only when its process is gone (or after the full
    // stale age), never by a caller's short `staleMs`, which would let a live release be overtaken.
    const guardStaleMs = Math.max(staleMs, STALE_MS);
    if (guardHolder && depth < 3 && (await isStale(guardHolder, guardStaleMs)))
      await removeIfStill(guard, guardHolder, guardStaleMs, depth + 1);
    return 'busy';
  }
  try {
    let now: Holder | undefined;
    try {
      now = await readHolder(file);
    } catch (error) {
      if (isBusy(error)) return 'busy';
      throw lockError(file, 'read', error);
    }
    if (!now || now.text !== holder.text || now.ino !== holder.ino || now.mtimeMs !== holder.mtimeMs)
      return 'changed';
    try {
      await unlink(file);
    } catch (error) {
      if (isMissing(error)) return 'changed';
      if (isBusy(error)) return 'busy';
      throw lockError(file, 'remove', error, holder);
    }
    return 'removed';
  } finally {
    await unlink(guard).catch(() => {});
  }
}

/** Removes our lock unless it was taken over (we were judged crashed) and is another holder's now. */
async function release(lockPath: string, token: string, staleMs: number): Promise<void> {
  try {
    const holder = await readHolder(lockPath);
    if (holder?.text === token) await removeIfStill(lockPath, holder, staleMs);
  } catch {
    // The edit is done: a lock we could not remove is taken over once this process has exited.
  }
}

/** Guards of guards are named after the lock, not nested: `<lock>.break-<a>` guards `<lock>.break-<b>`. */
function stripGuards(file: string): string {
  // Suffix by suffix from the end, not one pattern anchored at `$` (which backtracks from every start).
  const marker = '.break-';
  const suffix = marker.length + 16;
  let out = file;
  while (
    out.length >= suffix &&
    out.slice(-suffix, -16) === marker &&
    /^[0-9a-f]{16}$/.test(out.slice(-16))
  ) {
    out = out.slice(0, -suffix);
  }
  return out;
}

function fingerprint(holder: Holder): string {
  return createHash('sha256')
    .update(`${holder.text}\0${holder.ino}\0${holder.mtimeMs}`)
    .digest('hex')
    .slice(0, 16);
}

/** Windows says EPERM, EACCES or EBUSY for a file being deleted or opened for deletion: wait, as for EEXIST. */
function isBusy(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return process.platform === 'win32' && (code === 'EPERM' || code === 'EACCES' || code === 'EBUSY');
}

function describeHolder(holder: Holder): string {
  return holder.pid ? `process ${holder.pid}${holder.host ? ` on ${holder.host}` : ''}` : 'an unknown holder';
}

function lockError(
  lockPath: string,
  action: 'create' | 'read' | 'remove',
  error: unknown,
  holder?: Holder,
): ResolveError {
  const reason = (error as Error).message;
  if (action === 'remove')
    return new ResolveError(
      'conflict',
      `The abandoned lock ${lockPath} (${describeHolder(holder!)}, ${Math.round(holder!.ageMs / 1000)} s old) cannot be removed (${reason}); nothing was changed. Delete it (or have its owner delete it) and try again.`,
    );
  return new ResolveError(
    'conflict',
    `The lock ${lockPath} cannot be ${action === 'create' ? 'created' : 'read'} (${reason}); nothing was changed.`,
  );
}

function heldError(
  lockPath: string,
  holder: Holder | undefined,
  unreadable: NodeJS.ErrnoException | undefined,
  staleMs: number,
): ResolveError {
  const who = holder?.pid
    ? `Another atskills (${describeHolder(holder)}) is editing the same file`
    : holder
      ? `The lock ${lockPath} names no holder (an atskills killed while taking it leaves it so; it is taken over ${Math.ceil(Math.max(0, staleMs - holder.ageMs) / 1000)} s from now)`
      : `The lock ${lockPath} is held${unreadable ? ` and cannot be read (${unreadable.code})` : ''}`;
  return new ResolveError(
    'conflict',
    `${who}; nothing was changed. Try again, or delete ${lockPath} if no atskills is running.`,
  );
}
