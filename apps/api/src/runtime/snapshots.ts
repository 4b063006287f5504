import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { deserialize, serialize } from 'node:v8';
import { gunzip, gzip } from 'node:zlib';
import {
  type ChangeMark,
  currentChangeMark,
  type Database,
  type ModelSnapshotHeader,
  modelSnapshotHeader,
  modelSnapshotPart,
  saveModelSnapshot,
} from '@atskills/db';
import type { FastifyInstance } from 'fastify';
import { TimeSlicer } from './time-slice.js';

// Snapshots of the API's in-memory structures (the search index, the suggestion model), stored in Postgres
// (model_snapshots) so a restart, or another replica, loads them instead of building them from every
// skill's text. Each structure says what it stores; this file splits, compresses, stores and checks.

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/**
 * Bytes of a typed array, and items of a plain array, per stored part: each part is read, parsed and
 * serialised in one go on the event loop, so this bounds how long one holds it (a 27 MB part held it 0.7 s
 * on a pg answer alone at 54,061 skills).
 */
const PIECE_BYTES = 4 * 2 ** 20;
const PIECE_ITEMS = 4_000;
/** The layout of the parts below; the code fingerprint covers the rest. */
const LAYOUT = 2;
/** apps/api/src (this file is in runtime/). */
const SOURCE_ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

const fingerprints = new Map<string, Promise<string>>();

/**
 * The format a snapshot is written in: the layout, the Node major (the serialiser's), and a hash of the code
 * that builds the structure (`sources`: folders, or modules without their extension, under apps/api/src).
 * A snapshot of other code is never loaded: a changed stemmer would stem a query one way and the stored
 * skills another, and no catch-up notices that. Hashing the files (not a version number someone must
 * remember to raise) keeps a developer's edited checkout and a benchmark from loading a stale structure.
 */
export function snapshotFormat(sources: readonly string[]): Promise<string> {
  const key = sources.join('|');
  let held = fingerprints.get(key);
  if (!held) {
    held = (async () => {
      const hash = createHash('sha256');
      for (const source of sources) {
        for (const file of await codeFiles(path.join(SOURCE_ROOT, source))) {
          hash.update(path.basename(file)).update(await readFile(file));
        }
      }
      return `${LAYOUT};node${process.versions.node.split('.')[0]};${hash.digest('hex').slice(0, 24)}`;
    })();
    fingerprints.set(key, held);
  }
  return held;
}

/** The code files of a folder (sorted), or of one module given without its extension (.ts or .js). */
async function codeFiles(source: string): Promise<string[]> {
  const isCode = (name: string) => /\.(ts|js)$/.test(name) && !/\.test\.|\.d\.ts$/.test(name);
  try {
    const names = await readdir(source);
    return names
      .filter(isCode)
      .sort()
      .map((name) => path.join(source, name));
  } catch {
    const dir = path.dirname(source);
    const base = path.basename(source);
    const names = await readdir(dir);
    return names
      .filter((name) => isCode(name) && name.replace(/\.(ts|js)$/, '') === base)
      .map((name) => path.join(dir, name));
  }
}

/** A structure that took changes is stored again once its snapshot is this old: a restart catches up hours, not days. */
const SNAPSHOT_EVERY_MS = 6 * 60 * 60 * 1000;
/** One that took none, once a day, so a quiet hub's snapshot stays young enough to load (below). */
const SNAPSHOT_REFRESH_MS = 24 * 60 * 60 * 1000;
/**
 * Snapshots older than this are not loaded: a catch-up learns which identities skills left from the
 * tombstones, kept seven days (migration 0015), so from an older mark a removal could go unnoticed.
 */
const SNAPSHOT_MAX_AGE_MS = 6 * 24 * 60 * 60 * 1000;

/** Whether a structure whose snapshot is `ageMs` old, and which `changed` since or not, is due to be stored again. */
export function snapshotDue(ageMs: number, changed: boolean, everyMs = SNAPSHOT_EVERY_MS): boolean {
  return ageMs >= everyMs && (changed || ageMs >= SNAPSHOT_REFRESH_MS);
}

/** A snapshot was restored, stored, or found unusable (the structure is then built), for the log. */
export type SnapshotEvent =
  | { kind: 'restored'; skills: number; bytes: number; seconds: number; createdAt: Date }
  | { kind: 'stored'; skills: number; bytes: number; seconds: number }
  | { kind: 'unusable'; reason: string };

/** Logs what happened to a structure's snapshot (an unusable one is why the structure builds). */
export function logSnapshot(app: FastifyInstance, structure: string, event: SnapshotEvent): void {
  if (event.kind === 'unusable')
    app.log.info({ reason: event.reason }, `${structure}: no stored snapshot to load, building`);
  else app.log.info(event, `${structure}: snapshot ${event.kind}`);
}

/** What storing a snapshot took. */
interface SnapshotWrite {
  bytes: number;
  seconds: number;
}

/** The typed arrays a snapshot splits into pieces (and reads back) by their constructor's name. */
const TYPED = {
  Int8Array,
  Uint8Array,
  Int16Array,
  Uint16Array,
  Int32Array,
  Uint32Array,
  Float32Array,
  Float64Array,
};
type TypedName = keyof typeof TYPED;
type Typed = InstanceType<(typeof TYPED)[TypedName]>;

/** Where a large array went: the parts holding its pieces, in order. */
interface PieceRef {
  $pieces: number[];
  /** A typed array's constructor (its pieces are its raw bytes), or absent for a plain array (serialised). */
  typed?: TypedName;
}

const EMPTY = Buffer.alloc(0);

const isPieceRef = (v: unknown): v is PieceRef =>
  typeof v === 'object' && v !== null && Array.isArray((v as PieceRef).$pieces);

/**
 * Splits a snapshot into parts of bounded size: the first holds the snapshot with each large array (typed or
 * plain, at any depth of plain objects) replaced by the numbers of the parts its pieces went to. A typed
 * array's pieces are its bytes as they are, a plain array's are serialised. Node's structured-clone
 * serialiser (`v8`) writes the rest: typed arrays as bytes and plain objects as they are, and the code
 * fingerprint pins the version that reads it, so no format of our own is needed beyond the pieces.
 */
export async function toParts(
  value: unknown,
  slice: TimeSlicer,
  limits = { bytes: PIECE_BYTES, items: PIECE_ITEMS },
): Promise<Buffer[]> {
  const parts: Buffer[] = [Buffer.alloc(0)];
  const piece = async (buffer: Buffer) => {
    if (slice.due()) await slice.pause();
    parts.push(buffer);
    return parts.length - 1;
  };
  const walk = async (v: unknown): Promise<unknown> => {
    if (ArrayBuffer.isView(v) && !(v instanceof DataView)) {
      const typed = v as Typed;
      const name = typed.constructor.name;
      // Refused when stored, not when loaded: a snapshot that cannot be read back would cost every start a
      // build. Refused small too, though the serialiser writes a small one itself: a kind only a large
      // structure splits into pieces failed to store at 54,061 skills and nowhere in the tests.
      if (!(name in TYPED)) throw new Error(`a snapshot cannot hold a ${name}`);
      if (v.byteLength <= limits.bytes) return v;
      const refs: number[] = [];
      const per = Math.max(1, Math.floor(limits.bytes / typed.BYTES_PER_ELEMENT));
      for (let i = 0; i < typed.length; i += per) {
        const chunk = typed.subarray(i, i + per);
        refs.push(
          await piece(Buffer.from(chunk.buffer.slice(chunk.byteOffset, chunk.byteOffset + chunk.byteLength))),
        );
      }
      return { $pieces: refs, typed: name as TypedName } satisfies PieceRef;
    }
    if (Array.isArray(v) && v.length > limits.items) {
      const refs: number[] = [];
      for (let i = 0; i < v.length; i += limits.items)
        refs.push(await piece(serialize(v.slice(i, i + limits.items))));
      return { $pieces: refs } satisfies PieceRef;
    }
    if (v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
      const out: Record<string, unknown> = {};
      for (const [key, inner] of Object.entries(v)) out[key] = await walk(inner);
      return out;
    }
    return v;
  };
  parts[0] = serialize(await walk(value));
  return parts;
}

/** The snapshot `toParts` split, from its (decompressed) parts. */
export async function fromParts(parts: Buffer[], slice: TimeSlicer): Promise<unknown> {
  /** A part's bytes, once: the reference is dropped so a large snapshot is not held twice while it loads. */
  const take = (k: number) => {
    const part = parts[k]!;
    parts[k] = EMPTY;
    return part;
  };
  const walk = async (v: unknown): Promise<unknown> => {
    if (isPieceRef(v)) {
      if (slice.due()) await slice.pause();
      if (v.typed) {
        // Each piece copied into place in its own slice: one copy of a 122 MiB list held the loop 0.7 s.
        const pieces = v.$pieces.map(take);
        const length = pieces.reduce((sum, p) => sum + p.length, 0);
        const Make = TYPED[v.typed];
        const out = new Make(length / Make.BYTES_PER_ELEMENT);
        const bytes = new Uint8Array(out.buffer);
        let at = 0;
        for (const piece of pieces) {
          if (slice.due()) await slice.pause();
          bytes.set(piece, at);
          at += piece.length;
        }
        return out;
      }
      const out: unknown[] = [];
      for (const k of v.$pieces) {
        if (slice.due()) await slice.pause();
        for (const item of deserialize(take(k)) as unknown[]) out.push(item);
      }
      return out;
    }
    if (v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
      const out: Record<string, unknown> = {};
      for (const [key, inner] of Object.entries(v)) out[key] = await walk(inner);
      return out;
    }
    return v;
  };
  return walk(deserialize(take(0)));
}

/**
 * Stores `value` as the snapshot `name`, current to `mark` (of `skills` skills), in parts of a few megabytes
 * (serialised on the event loop in `slice`s, compressed off it on zlib's threads).
 */
async function saveSnapshot(
  db: Database,
  stored: { name: string; format: string; mark: ChangeMark; skills: number; value: unknown },
  slice: TimeSlicer,
): Promise<SnapshotWrite> {
  const started = performance.now();
  const raw = await toParts(stored.value, slice);
  const parts = await Promise.all(raw.map((part) => gzipAsync(part, { level: 1 })));
  await saveModelSnapshot(db, { ...stored, parts });
  return {
    bytes: parts.reduce((sum, p) => sum + p.length, 0),
    seconds: (performance.now() - started) / 1000,
  };
}

/** A stored snapshot read back, or why none could be used. */
type SnapshotRead<T> =
  | { value: T; mark: ChangeMark; createdAt: Date; bytes: number; skills: number }
  | { unusable: string };

/** Why a stored snapshot (its header) cannot be loaded by code of `format` at `currentMark`; null when it can. */
function whyUnusable(
  header: ModelSnapshotHeader | null,
  format: string,
  currentMark: ChangeMark,
): string | null {
  if (!header) return 'none stored';
  if (header.format !== format) return `written by other code (${header.format}, this is ${format})`;
  const ageMs = Date.now() - header.createdAt.getTime();
  if (ageMs > SNAPSHOT_MAX_AGE_MS) {
    return `stored ${(ageMs / 86_400_000).toFixed(1)} days ago, before what the change feed still records`;
  }
  const stored = BigInt(header.mark);
  const now = BigInt(currentMark);
  if (stored > now || stored >> 32n !== now >> 32n) {
    return `its change mark ${header.mark} cannot be caught up from (the database is at ${currentMark})`;
  }
  return null;
}

/**
 * The stored snapshot `name`, when one of `format` is there and its mark is one this database can catch up
 * from: of the current transaction epoch (changedSkills) and not ahead of it (a database restored from a
 * dump into another server numbers transactions afresh, and a mark ahead of them would miss every change).
 */
async function loadSnapshot<T>(
  db: Database,
  name: string,
  format: string,
  currentMark: ChangeMark,
  slice: TimeSlicer,
): Promise<SnapshotRead<T>> {
  const header = await modelSnapshotHeader(db, name);
  const unusable = whyUnusable(header, format, currentMark);
  if (unusable !== null || !header) return { unusable: unusable ?? 'none stored' };
  const parts: Buffer[] = [];
  for (let part = 0; part < header.parts; part++) {
    const content = await modelSnapshotPart(db, name, part);
    if (!content) return { unusable: `part ${part} is missing (replaced while it was read)` };
    parts.push(await gunzipAsync(content));
  }
  return {
    value: (await fromParts(parts, slice)) as T,
    mark: header.mark,
    createdAt: header.createdAt,
    bytes: header.bytes,
    skills: header.skills,
  };
}

/** How a structure is stored and restored (see SnapshotKeeper). */
export interface SnapshotSettings {
  /** Its name in model_snapshots. */
  name: string;
  /** The code it depends on (snapshotFormat). */
  sources: readonly string[];
  /** Off: never stored nor loaded (INDEX_SNAPSHOTS=false). */
  enabled: boolean;
  onSnapshot?: ((event: SnapshotEvent) => void) | undefined;
  onError?: ((err: unknown) => void) | undefined;
  /** Stored again once this old after taking changes (snapshotDue's default otherwise). */
  everyMs?: number | undefined;
  /** Slices of the event loop a restore takes at a time (the structure's build slices). */
  sliceMs?: number | undefined;
}

/** What a structure does with its snapshot: put a stored one in place, catch up from there, or build. */
export interface SnapshotSteps<T> {
  /** Puts a stored snapshot in place (current to `mark`); a reason when it cannot (it is then built). */
  restore(value: T, mark: ChangeMark, slice: TimeSlicer): Promise<string | null>;
  /** Every change since the restored snapshot's mark. */
  catchUp(): Promise<void>;
  build(): Promise<void>;
}

/**
 * The snapshot side of a structure a ChangeFollower keeps (the search index, the suggestion model): loads
 * the stored one in place of the first build, stores it after builds and when `due`, and reports both.
 */
export class SnapshotKeeper<T> {
  /** Seconds the last restore took (null once the structure was built instead). */
  restoreSeconds: number | null = null;
  private storedAt = 0;
  private changed = false;
  private tried = false;

  constructor(
    private readonly db: Database,
    private readonly settings: SnapshotSettings,
  ) {}

  /** The follower's build step: the stored snapshot the first time, when one can be used, then a catch-up; else a build. */
  async buildOrRestore(steps: SnapshotSteps<T>): Promise<void> {
    if (this.settings.enabled && !this.tried) {
      this.tried = true;
      if (await this.restore(steps)) {
        await steps.catchUp();
        return;
      }
    }
    await steps.build();
  }

  private async restore(steps: SnapshotSteps<T>): Promise<boolean> {
    const { name, sources, sliceMs, onSnapshot } = this.settings;
    const started = performance.now();
    const slice = new TimeSlicer(sliceMs);
    try {
      const read = await loadSnapshot<T>(
        this.db,
        name,
        await snapshotFormat(sources),
        await currentChangeMark(this.db),
        slice,
      );
      if ('unusable' in read) return this.unusable(read.unusable);
      const refused = await steps.restore(read.value, read.mark, slice);
      if (refused !== null) return this.unusable(refused);
      this.restoreSeconds = (performance.now() - started) / 1000;
      this.storedAt = Date.now();
      this.changed = false;
      onSnapshot?.({
        kind: 'restored',
        skills: read.skills,
        bytes: read.bytes,
        seconds: this.restoreSeconds,
        createdAt: read.createdAt,
      });
      return true;
    } catch (err) {
      // A snapshot that cannot be read is only a slower start: build instead.
      return this.unusable((err as Error).message);
    }
  }

  /**
   * Whether the first build would load the stored snapshot (its header passes every check; its parts are
   * not read). False when snapshots are off or the first build already ran.
   */
  async storedUsable(): Promise<boolean> {
    const { name, sources, enabled } = this.settings;
    if (!enabled || this.tried) return false;
    const header = await modelSnapshotHeader(this.db, name);
    return whyUnusable(header, await snapshotFormat(sources), await currentChangeMark(this.db)) === null;
  }

  /** Reports why the stored snapshot is not used (the structure is built instead). */
  private unusable(reason: string): false {
    this.settings.onSnapshot?.({ kind: 'unusable', reason });
    return false;
  }

  /** The structure was built from the database (it restores nothing until the next start). */
  built(): void {
    this.restoreSeconds = null;
  }

  /** A catch-up removed or reloaded `applied` skills. */
  tookChanges(applied: number): void {
    if (applied > 0) this.changed = true;
  }

  /** Whether the stored snapshot is old enough to store again (snapshotDue). */
  get due(): boolean {
    return snapshotDue(Date.now() - this.storedAt, this.changed, this.settings.everyMs);
  }

  /**
   * Stores `value()` (of `skills` skills) current to `mark`, inside a build or catch-up (no other one changes
   * the structure meanwhile). A failure is reported and costs only the next start's time.
   */
  async store(mark: ChangeMark, skills: number, value: () => Promise<T>, slice: TimeSlicer): Promise<void> {
    const { name, sources, enabled, onSnapshot, onError } = this.settings;
    if (!enabled) return;
    try {
      const written = await saveSnapshot(
        this.db,
        { name, format: await snapshotFormat(sources), mark, skills, value: await value() },
        slice,
      );
      this.storedAt = Date.now();
      this.changed = false;
      onSnapshot?.({ kind: 'stored', skills, ...written });
    } catch (err) {
      onError?.(err);
    }
  }
}
