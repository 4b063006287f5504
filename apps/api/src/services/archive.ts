import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createGzip } from 'node:zlib';
import { type Database, readBlobs } from '@atskills/db';
import { SKILL_FILE } from '@atskills/protocol';
import { Header, Pax } from 'tar';
import { problem } from '../problems.js';
import { compareUtf8 } from './menu-revision.js';
import type { ResolvedSkill } from './resolve.js';
import { servableFiles } from './skill-view.js';

/** A built archive: the gzip bytes and their RFC 9530 digest header value. */
export interface SkillArchive {
  bytes: Buffer;
  /** `sha-256=:<base64>:` */
  contentDigest: string;
  files: number;
}

// Fixed metadata so the same revision always gives the same bytes (and so the same digest): caches and
// mirrors can compare archives byte for byte.
const FIXED_MTIME = new Date(0);
const BLOCK = 512;

function padding(size: number): Buffer {
  const rest = size % BLOCK;
  return Buffer.alloc(rest === 0 ? 0 : BLOCK - rest);
}

/** One tar entry (header, a pax header first when the path needs it, content, padding). */
function entry(path: string, content: Buffer): Buffer[] {
  const data = {
    path,
    mode: 0o644,
    uid: 0,
    gid: 0,
    uname: '',
    gname: '',
    size: content.length,
    mtime: FIXED_MTIME,
    type: 'File' as const,
  };
  const header = new Header(data);
  const block = Buffer.alloc(BLOCK);
  header.encode(block, 0);
  const parts: Buffer[] = [];
  // Paths over 100 bytes or outside ASCII go in a pax extended header (tar's own encoder).
  if (header.needPax) parts.push(new Pax({ ...data, atime: FIXED_MTIME, ctime: FIXED_MTIME }).encode());
  parts.push(block, content, padding(content.length));
  return parts;
}

// Blobs are read from the content-addressed store in batches of at most this many bytes, so a build holds
// one batch of raw content plus the compressed output, never the whole raw tar.
const READ_BATCH_BYTES = 4 * 1024 * 1024;

/**
 * The skill folder as a deterministic gzip tar built from stored blobs: entries sorted by path (UTF-8
 * bytes), paths relative to the skill folder, mtime 0, uid/gid 0, mode 644. Every entry's content is
 * checked against its sha256 on the way out. Content streams from the blob store batch by batch into a
 * gzip stream that compresses on libuv's thread pool, so a large build never blocks other requests.
 */
export async function buildSkillArchive(
  db: Database,
  skill: Pick<ResolvedSkill, 'identity' | 'files'>,
): Promise<SkillArchive> {
  const files = (await servableFiles(db, skill)).sort((a, b) => compareUtf8(a.path, b.path));
  // servableFiles leaves out files whose content is not stored; without its SKILL.md the archive would be
  // no skill at all (an empty tar, which clients rightly refuse), so the hub says what is wrong instead.
  if (!files.some((f) => f.path === SKILL_FILE)) {
    throw problem('internal', `stored content of ${skill.identity}/${SKILL_FILE} is missing`);
  }
  const gzip = createGzip({ level: 6 });
  const out: Buffer[] = [];
  const digest = createHash('sha256');
  gzip.on('data', (chunk: Buffer) => {
    out.push(chunk);
    digest.update(chunk);
  });
  const finished = once(gzip, 'end');
  const write = async (part: Buffer) => {
    if (!gzip.write(part)) await once(gzip, 'drain');
  };
  try {
    for (let start = 0; start < files.length; ) {
      let end = start;
      let bytes = 0;
      while (end < files.length && (end === start || bytes + (files[end]?.size ?? 0) <= READ_BATCH_BYTES)) {
        bytes += files[end]?.size ?? 0;
        end++;
      }
      const batch = files.slice(start, end);
      const contents = await readBlobs(
        db,
        batch.map((f) => f.sha256),
      );
      for (const file of batch) {
        const content = contents.get(file.sha256);
        if (!content || createHash('sha256').update(content).digest('hex') !== file.sha256) {
          throw problem('internal', `stored content of ${skill.identity}/${file.path} is missing or corrupt`);
        }
        for (const part of entry(file.path, content)) await write(part);
      }
      start = end;
    }
    await write(Buffer.alloc(BLOCK * 2));
    gzip.end();
    await finished;
  } catch (err) {
    gzip.destroy();
    throw err;
  }
  return {
    bytes: Buffer.concat(out),
    contentDigest: `sha-256=:${digest.digest('base64')}:`,
    files: files.length,
  };
}

/**
 * A file path within a skill as given by a caller: relative, `/`-separated, no `.`/`..`/empty segments,
 * no backslashes or control characters. Anything else is 400 `bad-path` (it could only be an attempt to
 * leave the folder).
 */
export function checkFilePath(path: string): string {
  const bad = (why: string) => problem('bad-path', `Bad file path ${JSON.stringify(path)}: ${why}`);
  if (path.startsWith('/')) throw bad('it must be relative to the skill folder');
  if (path.includes('\\')) throw bad('backslashes are not path separators here');
  if (/[\u0000-\u001f\u007f]/.test(path)) throw bad('it holds control characters');
  const segments = path.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..'))
    throw bad('empty, "." and ".." segments are not allowed');
  return path;
}

/** One stored file of a skill, or 404. */
export async function readSkillFile(
  db: Database,
  skill: ResolvedSkill,
  path: string,
): Promise<{ path: string; size: number; sha256: string; content: Buffer }> {
  const wanted = checkFilePath(path);
  const file = (await servableFiles(db, skill)).find((f) => f.path === wanted);
  if (!file) throw problem('not-found', `${skill.identity} has no file ${wanted}`);
  const content = (await readBlobs(db, [file.sha256])).get(file.sha256);
  if (!content) throw problem('not-found', `${skill.identity} has no file ${wanted}`);
  return { ...file, content };
}
