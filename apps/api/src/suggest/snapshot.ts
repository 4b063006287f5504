import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { deserialize, serialize } from 'node:v8';
import { gunzip, gzip } from 'node:zlib';
import {
  type ChangeMark,
  type Database,
  modelSnapshotHeader,
  modelSnapshotPart,
  saveModelSnapshot,
} from '@atskills/db';
import type { TimeSlicer } from '../runtime/time-slice.js';
import type { DenseModelSnapshot } from './dense.js';
import type { SemanticModelSnapshot } from './model.js';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/** The name the suggestion model is stored under (model_snapshots). */
export const SUGGESTION_SNAPSHOT = 'suggestion-model';
/**
 * Bytes of a typed array, and items of a plain array, per stored part: each part is read, parsed and
 * serialised in one go on the event loop, so this bounds how long one holds it (a 27 MB part held it 0.7 s
 * on a pg answer alone at 54,061 skills).
 */
const PIECE_BYTES = 4 * 2 ** 20;
const PIECE_ITEMS = 4_000;
/** The layout of the parts below; the code fingerprint covers the rest. */
const LAYOUT = 2;

/** What the suggestion engine keeps, as a snapshot stores it: the two models and what it holds per skill. */
export interface SuggestionSnapshot<Held> {
  semantic: SemanticModelSnapshot;
  dense: DenseModelSnapshot;
  /** Each held skill: its identity, its slot in the models, and what the engine holds of it. */
  entries: [identity: string, slot: number, held: Held][];
  nextSlot: number;
}

let fingerprint: Promise<string> | undefined;

/**
 * The format a snapshot is written in: the layout, the Node major (the serialiser's), and a hash of the code
 * that analyses text and builds the models (this folder, the search analyser, what a held skill is made of).
 * A snapshot of other code is never loaded: a changed stemmer would stem a message one way and the stored
 * skills another, and no catch-up notices that. Hashing the files (not a version number someone must
 * remember to raise) keeps a developer's edited checkout and a benchmark from loading a stale model.
 */
export function snapshotFormat(): Promise<string> {
  fingerprint ??= (async () => {
    const here = path.dirname(fileURLToPath(import.meta.url));
    const sources = [
      here,
      path.join(here, '../search/relevance'),
      path.join(here, '../search/memory/skill-index'),
      path.join(here, '../search/hits'),
    ];
    const hash = createHash('sha256');
    for (const source of sources) {
      const files = await codeFiles(source);
      for (const file of files) hash.update(path.basename(file)).update(await readFile(file));
    }
    return `${LAYOUT};node${process.versions.node.split('.')[0]};${hash.digest('hex').slice(0, 24)}`;
  })();
  return fingerprint;
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

/** What storing a snapshot took. */
export interface SnapshotWrite {
  bytes: number;
  seconds: number;
}

type Typed = Int8Array | Uint8Array | Int32Array | Uint32Array | Float32Array | Float64Array;
const TYPED = { Int8Array, Uint8Array, Int32Array, Uint32Array, Float32Array, Float64Array };
type TypedName = keyof typeof TYPED;

/** Where a large array went: the parts holding its pieces, in order. */
interface PieceRef {
  $pieces: number[];
  /** A typed array's constructor (its pieces are its raw bytes), or absent for a plain array (serialised). */
  typed?: TypedName;
}

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
    if (ArrayBuffer.isView(v) && !(v instanceof DataView) && v.byteLength > limits.bytes) {
      const typed = v as Typed;
      const refs: number[] = [];
      const per = Math.max(1, Math.floor(limits.bytes / typed.BYTES_PER_ELEMENT));
      for (let i = 0; i < typed.length; i += per) {
        const chunk = typed.subarray(i, i + per);
        refs.push(
          await piece(Buffer.from(chunk.buffer.slice(chunk.byteOffset, chunk.byteOffset + chunk.byteLength))),
        );
      }
      return { $pieces: refs, typed: typed.constructor.name as TypedName } satisfies PieceRef;
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
export async function fromParts(parts: readonly Buffer[], slice: TimeSlicer): Promise<unknown> {
  const walk = async (v: unknown): Promise<unknown> => {
    if (isPieceRef(v)) {
      if (slice.due()) await slice.pause();
      if (v.typed) {
        const Make = TYPED[v.typed];
        const bytes = Buffer.concat(v.$pieces.map((k) => parts[k]!));
        // A fresh buffer: a typed array must start at a multiple of its element size.
        const copy = new Uint8Array(bytes.length);
        copy.set(bytes);
        return new Make(copy.buffer);
      }
      const out: unknown[] = [];
      for (const k of v.$pieces) {
        if (slice.due()) await slice.pause();
        for (const item of deserialize(parts[k]!) as unknown[]) out.push(item);
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
  return walk(deserialize(parts[0]!));
}

/**
 * Stores a snapshot of the suggestion engine current to `mark`, in parts of a few megabytes (serialised on
 * the event loop in `slice`s, compressed off it on zlib's threads).
 */
export async function saveSuggestionSnapshot<Held>(
  db: Database,
  mark: ChangeMark,
  snapshot: SuggestionSnapshot<Held>,
  slice: TimeSlicer,
): Promise<SnapshotWrite> {
  const started = performance.now();
  const raw = await toParts(snapshot, slice);
  const parts = await Promise.all(raw.map((part) => gzipAsync(part, { level: 1 })));
  await saveModelSnapshot(db, {
    name: SUGGESTION_SNAPSHOT,
    format: await snapshotFormat(),
    mark,
    skills: snapshot.entries.length,
    parts,
  });
  return {
    bytes: parts.reduce((sum, p) => sum + p.length, 0),
    seconds: (performance.now() - started) / 1000,
  };
}

/** A stored snapshot read back, or why none could be used. */
export type SnapshotRead<Held> =
  | { snapshot: SuggestionSnapshot<Held>; mark: ChangeMark; createdAt: Date; bytes: number }
  | { unusable: string };

/**
 * The stored snapshot, when one of this format is there and its mark is one this database can catch up
 * from: of the current transaction epoch (changedSkills) and not ahead of it (a database restored from a
 * dump into another server numbers transactions afresh, and a mark ahead of them would miss every change).
 */
export async function loadSuggestionSnapshot<Held>(
  db: Database,
  currentMark: ChangeMark,
  slice: TimeSlicer,
): Promise<SnapshotRead<Held>> {
  const header = await modelSnapshotHeader(db, SUGGESTION_SNAPSHOT);
  if (!header) return { unusable: 'none stored' };
  const format = await snapshotFormat();
  if (header.format !== format)
    return { unusable: `written by other code (${header.format}, this is ${format})` };
  const stored = BigInt(header.mark);
  const now = BigInt(currentMark);
  if (stored > now || stored >> 32n !== now >> 32n) {
    return {
      unusable: `its change mark ${header.mark} cannot be caught up from (the database is at ${currentMark})`,
    };
  }
  const parts: Buffer[] = [];
  for (let part = 0; part < header.parts; part++) {
    const content = await modelSnapshotPart(db, SUGGESTION_SNAPSHOT, part);
    if (!content) return { unusable: `part ${part} is missing (replaced while it was read)` };
    parts.push(await gunzipAsync(content));
  }
  return {
    snapshot: (await fromParts(parts, slice)) as SuggestionSnapshot<Held>,
    mark: header.mark,
    createdAt: header.createdAt,
    bytes: header.bytes,
  };
}
