import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';

/** Who holds an embedded database, as written in its lock file. */
export interface EmbeddedLockOwner {
  pid: number;
  /** `hub` (a running hub) or `cli` (the admin command line). */
  kind: string;
  startedAt: string;
  /** Where the hub listens (hubs only, once listening). */
  url?: string;
  /** The hub's local admin socket, through which the CLI acts while the hub runs (hubs only). */
  adminSocket?: string;
}

/** A second process tried to open an embedded database another live process holds. */
export class EmbeddedDatabaseBusy extends Error {
  constructor(
    readonly dataDir: string,
    readonly owner: EmbeddedLockOwner,
  ) {
    const who =
      owner.kind === 'hub'
        ? `a running hub (pid ${owner.pid}${owner.url ? `, ${owner.url}` : ''})`
        : `another process (${owner.kind}, pid ${owner.pid})`;
    super(
      `The embedded database in ${dataDir} is in use by ${who}; stop it first, or set ATSKILLS_DATA_DIR to another folder.`,
    );
    this.name = 'EmbeddedDatabaseBusy';
  }
}

/** The lock file of the embedded database in `dataDir`: beside it, so removing the data removes it too. */
export function embeddedLockPath(dataDir: string): string {
  return `${path.resolve(dataDir)}.lock`;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The live owner of `dataDir`'s embedded database, if any (a lock left by a dead process is none). */
export function readEmbeddedLock(dataDir: string): EmbeddedLockOwner | undefined {
  try {
    const owner = JSON.parse(readFileSync(embeddedLockPath(dataDir), 'utf8')) as EmbeddedLockOwner;
    return Number.isInteger(owner.pid) && alive(owner.pid) ? owner : undefined;
  } catch {
    return undefined;
  }
}

/** A held lock: update what it says about its owner, release it. */
export interface EmbeddedLock {
  update(extra: Partial<Pick<EmbeddedLockOwner, 'url' | 'adminSocket'>>): void;
  release(): void;
}

/**
 * Takes the exclusive lock of an embedded database (PGlite keeps no lock of its own: two processes on one
 * folder silently corrupt it). The lock is a file created with O_EXCL holding the owner's pid; a lock whose
 * pid is gone is stale and taken over. Throws EmbeddedDatabaseBusy naming the live owner.
 */
export function acquireEmbeddedLock(dataDir: string, kind: string): EmbeddedLock {
  const file = embeddedLockPath(dataDir);
  mkdirSync(path.dirname(file), { recursive: true });
  let owner: EmbeddedLockOwner = { pid: process.pid, kind, startedAt: new Date().toISOString() };
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      try {
        writeSync(fd, JSON.stringify(owner));
      } finally {
        closeSync(fd);
      }
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) {
        const holder = readEmbeddedLock(dataDir);
        if (holder) throw new EmbeddedDatabaseBusy(path.resolve(dataDir), holder);
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const holder = readEmbeddedLock(dataDir);
      if (holder && holder.pid !== process.pid) throw new EmbeddedDatabaseBusy(path.resolve(dataDir), holder);
      // Stale (its process is gone): remove it and try once more; a racing taker makes our O_EXCL fail.
      try {
        unlinkSync(file);
      } catch {}
    }
  }
  let held = true;
  return {
    update(extra) {
      if (!held) return;
      owner = { ...owner, ...extra };
      writeFileSync(file, JSON.stringify(owner), { mode: 0o600 });
    },
    release() {
      if (!held) return;
      held = false;
      try {
        const current = JSON.parse(readFileSync(file, 'utf8')) as EmbeddedLockOwner;
        if (current.pid === process.pid) unlinkSync(file);
      } catch {}
    },
  };
}
