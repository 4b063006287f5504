import { Header, Pax } from 'tar';
import { problem } from '../../problems.js';
import { showPath } from './show-path.js';

/**
 * An incremental reader of a (decompressed) tar stream.
 *
 * Why not tar's own Parser: publishing must refuse, not repair. The Parser decodes names lossily (so a
 * non-UTF-8 name cannot be told apart), skips invalid headers as warnings, and stops looking after the
 * end-of-archive marker (so data past it goes unseen). This reader keeps that control and reuses the tar
 * package for the fiddly parts: `Header` (checksum, octal and base-256 numbers, ustar prefix) and `Pax`.
 */

/** What a tar header announces, as the reader hands it to its owner. */
export interface TarHeaderInfo {
  /** The entry's path: pax `path`, else GNU long name, else ustar prefix + name (validated UTF-8). */
  path: string;
  /** The raw typeflag ('0' for regular files, '5' directories, '2' symlinks, ...). */
  typeflag: string;
  size: number;
  linkpath: string;
  /** Byte offset of the header in the tar stream (for messages). */
  offset: number;
}

export interface TarReaderHooks {
  /** Called for each real entry header; return true to receive the entry's data. Throw to abort. */
  onHeader(info: TarHeaderInfo): boolean;
  /** The data of an entry whose header returned true. */
  onData(info: TarHeaderInfo, data: Buffer): void;
}

const BLOCK = 512;
/** Largest pax or GNU long-name body accepted: real ones are a few hundred bytes. */
const MAX_META_SIZE = 64 * 1024;
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

type State = 'header' | 'body' | 'padding' | 'end';

interface Current {
  info: TarHeaderInfo;
  /** 'entry' | 'pax' | 'global-pax' | 'long-name' | 'long-link' */
  role: 'entry' | 'pax' | 'global-pax' | 'long-name' | 'long-link';
  keep: boolean;
  remaining: number;
  parts: Buffer[];
}

export class TarReader {
  private readonly chunks: Buffer[] = [];
  private buffered = 0;
  private position = 0;
  private state: State = 'header';
  private current: Current | undefined;
  private paddingLeft = 0;
  private pendingPax: Pax | undefined;
  private pendingLongName: string | undefined;
  private pendingLongLink: string | undefined;
  private entries = 0;

  constructor(private readonly hooks: TarReaderHooks) {}

  /** Feeds decompressed bytes; throws a publish problem at the first structural error. */
  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    this.drain();
  }

  /** Ends the stream: a partial header or an entry cut short is a truncated archive. */
  end(): void {
    this.drain();
    if (this.state === 'end') return;
    if (this.state === 'body' || this.state === 'padding' || this.buffered > 0) {
      const what = this.current ? ` inside ${showPath(this.current.info.path)}` : '';
      throw problem('archive-truncated', `The tar archive ends in the middle of an entry${what}.`);
    }
    if (
      this.current ||
      this.pendingPax ||
      this.pendingLongName !== undefined ||
      this.pendingLongLink !== undefined
    ) {
      throw problem('archive-truncated', 'The tar archive ends after an extended header with no entry.');
    }
    if (this.entries === 0 && this.position === 0) {
      throw problem('archive-truncated', 'The archive is empty.');
    }
  }

  private drain(): void {
    for (;;) {
      switch (this.state) {
        case 'end':
          this.checkTrailingZeros();
          return;
        case 'header': {
          if (this.buffered < BLOCK) return;
          const offset = this.position;
          this.readHeader(this.take(BLOCK), offset);
          break;
        }
        case 'body': {
          const current = this.current as Current;
          if (current.remaining > 0) {
            if (this.buffered === 0) return;
            const n = Math.min(this.buffered, current.remaining);
            const part = this.take(n);
            current.remaining -= n;
            if (current.keep) current.parts.push(part);
            if (current.remaining > 0) return;
          }
          this.state = 'padding';
          break;
        }
        case 'padding': {
          if (this.paddingLeft > 0) {
            if (this.buffered === 0) return;
            const n = Math.min(this.buffered, this.paddingLeft);
            this.take(n);
            this.paddingLeft -= n;
            if (this.paddingLeft > 0) return;
          }
          this.finishEntry();
          this.state = 'header';
          break;
        }
      }
    }
  }

  private readHeader(block: Buffer, offset: number): void {
    if (block.every((b) => b === 0)) {
      if (this.pendingPax || this.pendingLongName !== undefined || this.pendingLongLink !== undefined) {
        throw problem(
          'archive-bad-header',
          `An extended header at byte ${offset} is followed by the end of the archive.`,
        );
      }
      // The end-of-archive marker: from here on only zero padding may follow.
      this.state = 'end';
      return;
    }
    const typeflag = String.fromCharCode(block[156] ?? 0).replace('\0', '0');
    const isMeta = 'xgLK'.includes(typeflag);
    const header = new Header(block, 0, isMeta ? undefined : this.pendingPax, undefined);
    if (!header.cksumValid) {
      throw problem(
        'archive-bad-header',
        `The tar header at byte ${offset} is invalid (checksum mismatch); an earlier entry may hold more data than its header declares.`,
        { offset },
      );
    }
    // tar's Header turns a regular file whose 100-byte name field ends in "/" into a directory and zeroes
    // its size, even when a GNU long name or pax path (the real path) follows: the size is read again from
    // a copy without that name, so the entry's data is skipped exactly as GNU tar and Python's tarfile do.
    const size = isMeta ? header.size : rawSize(block, this.pendingPax);
    if (size === undefined || !Number.isSafeInteger(size) || size < 0) {
      throw problem('archive-bad-header', `The tar header at byte ${offset} has an invalid size.`, {
        offset,
      });
    }
    // Only POSIX ustar (magic "ustar\0", version "00") has a name prefix at byte 345. GNU's magic
    // "ustar  \0" keeps other fields there, which GNU tar and Python never read as part of the name: a reader
    // that did would publish a path neither of them lists.
    const magic = block.subarray(257, 265).toString('latin1');
    const ustar = magic === 'ustar\u000000';
    // Python's tarfile does read a prefix there whatever the magic: the two disagree on such a name.
    if (magic === 'ustar  \u0000' && !isMeta && block.subarray(345, 500).some((b) => b !== 0)) {
      throw problem(
        'archive-bad-header',
        `The GNU tar header at byte ${offset} carries data in the ustar name-prefix field; tar implementations read its name differently.`,
        { offset },
      );
    }
    if (this.pendingPax !== undefined && this.pendingLongName !== undefined && !isMeta) {
      throw problem(
        'archive-bad-header',
        `The entry at byte ${offset} has both a pax header and a GNU long name; tar implementations disagree on which wins.`,
        { offset },
      );
    }
    let path: string;
    if (!isMeta && this.pendingPax?.path !== undefined) path = this.pendingPax.path;
    else if (!isMeta && this.pendingLongName !== undefined) path = this.pendingLongName;
    else {
      const name = utf8Field(block, 0, 100, offset);
      const prefix = ustar && block[345] !== 0 ? utf8Field(block, 345, 155, offset) : '';
      path = prefix ? `${prefix}/${name}` : name;
    }
    let linkpath = '';
    if (!isMeta && this.pendingPax?.linkpath !== undefined) linkpath = this.pendingPax.linkpath;
    else if (!isMeta && this.pendingLongLink !== undefined) linkpath = this.pendingLongLink;
    else if (!isMeta) linkpath = utf8Field(block, 157, 100, offset);
    // Old archivers mark directories as regular files with a trailing slash.
    const effectiveType = typeflag === '0' && path.endsWith('/') ? '5' : typeflag;
    if (effectiveType === '5' && size > 0) {
      // Python's tarfile reads a directory's "data" as the next headers, GNU tar skips it: an entry hidden
      // there would be listed by one and not the other, so neither reading is taken.
      throw problem(
        'archive-bad-header',
        `The directory ${showPath(path)} at byte ${offset} declares ${size} bytes of data.`,
        { offset },
      );
    }
    const bodySize = effectiveType === '5' ? 0 : size;
    const info: TarHeaderInfo = { path, typeflag: effectiveType, size: bodySize, linkpath, offset };

    let role: Current['role'] = 'entry';
    let keep: boolean;
    if (isMeta) {
      role =
        typeflag === 'x'
          ? 'pax'
          : typeflag === 'g'
            ? 'global-pax'
            : typeflag === 'L'
              ? 'long-name'
              : 'long-link';
      if (bodySize > MAX_META_SIZE) {
        throw problem(
          'archive-bad-header',
          `An extended tar header at byte ${offset} is larger than ${MAX_META_SIZE} bytes.`,
        );
      }
      keep = true;
    } else {
      this.entries++;
      this.pendingPax = undefined;
      this.pendingLongName = undefined;
      this.pendingLongLink = undefined;
      keep = this.hooks.onHeader(info);
    }
    this.current = { info, role, keep, remaining: bodySize, parts: [] };
    this.paddingLeft = (BLOCK - (bodySize % BLOCK)) % BLOCK;
    this.state = 'body';
  }

  private finishEntry(): void {
    const current = this.current as Current;
    this.current = undefined;
    const data = current.parts.length === 1 ? (current.parts[0] as Buffer) : Buffer.concat(current.parts);
    switch (current.role) {
      case 'entry':
        if (current.keep) this.hooks.onData(current.info, data);
        return;
      case 'pax': {
        if (this.pendingPax !== undefined) {
          throw problem(
            'archive-bad-header',
            `Two pax headers in a row at byte ${current.info.offset}; tar implementations disagree on them.`,
          );
        }
        const text = decodeMeta(data, current.info.offset);
        // A NUL inside a pax record would cut the path short in some readers and not others: refuse it.
        if (text.includes('\0')) {
          throw problem(
            'archive-unsafe-path',
            `The pax header at byte ${current.info.offset} holds a NUL character.`,
            { path: '' },
          );
        }
        this.pendingPax = Pax.parse(text, undefined, false);
        return;
      }
      case 'global-pax':
        // Global headers only carry defaults (mtime, uname, ...); a global path or size is refused as ambiguous.
        if (/(^|\n)\d+ (path|size|linkpath)=/.test(decodeMeta(data, current.info.offset))) {
          throw problem(
            'archive-bad-header',
            'A global pax header sets path, size or linkpath for every entry.',
          );
        }
        return;
      case 'long-name': {
        const name = decodeMeta(data, current.info.offset).replace(/(?<!\0)\0+$/, '');
        if (name.includes('\0')) {
          throw problem(
            'archive-unsafe-path',
            `The GNU long name at byte ${current.info.offset} holds a NUL character.`,
            { path: '' },
          );
        }
        this.pendingLongName = name;
        return;
      }
      case 'long-link':
        this.pendingLongLink = decodeMeta(data, current.info.offset).replace(/(?<!\0)\0+$/, '');
        return;
    }
  }

  private checkTrailingZeros(): void {
    while (this.chunks.length > 0) {
      const chunk = this.take(Math.min(this.buffered, 64 * 1024));
      if (!chunk.every((b) => b === 0)) {
        throw problem(
          'archive-trailing-data',
          'The archive holds data after its end-of-archive marker (an entry may be longer than its header declares).',
        );
      }
    }
  }

  /** Removes and returns the next `n` buffered bytes (n <= buffered). */
  private take(n: number): Buffer {
    this.buffered -= n;
    this.position += n;
    const head = this.chunks[0] as Buffer;
    if (head.length === n) {
      this.chunks.shift();
      return head;
    }
    if (head.length > n) {
      this.chunks[0] = head.subarray(n);
      return head.subarray(0, n);
    }
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    while (filled < n) {
      const chunk = this.chunks[0] as Buffer;
      const want = n - filled;
      if (chunk.length <= want) {
        chunk.copy(out, filled);
        filled += chunk.length;
        this.chunks.shift();
      } else {
        chunk.copy(out, filled, 0, want);
        this.chunks[0] = chunk.subarray(want);
        filled += want;
      }
    }
    return out;
  }
}

/** The size a header declares (pax `size` included), read without tar's trailing-slash directory rule. */
function rawSize(block: Buffer, pax: Pax | undefined): number | undefined {
  const copy = Buffer.from(block);
  copy.fill(0, 0, 100);
  const flag = copy[156];
  // Directories get size 0 from Header whatever they declare; read them as files to see the declared size.
  if (flag === 0x35 || flag === 0 || flag === 0x30) copy[156] = 0x30;
  return new Header(copy, 0, pax, undefined).size;
}

/** A NUL-terminated header field decoded as strict UTF-8. */
function utf8Field(block: Buffer, start: number, length: number, offset: number): string {
  const field = block.subarray(start, start + length);
  const end = field.indexOf(0);
  return decodeName(end < 0 ? field : field.subarray(0, end), offset);
}

function decodeName(bytes: Uint8Array, offset: number): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw problem('archive-name-encoding', `The entry name at byte ${offset} is not valid UTF-8.`, {
      offset,
    });
  }
}

function decodeMeta(data: Buffer, offset: number): string {
  return decodeName(data, offset);
}
