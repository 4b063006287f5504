import { createGunzip } from 'node:zlib';
import { SKILL_FILE } from '@atskills/protocol';
import type { HttpProblem } from '../../problems.js';
import { isHttpProblem, problem } from '../../problems.js';
import { normalizeArchivePath, PathRegistry } from './archive-paths.js';
import { maxTarBytes, type PublishLimits } from './limits.js';
import { showPath } from './show-path.js';
import { type TarHeaderInfo, TarReader } from './tar-reader.js';

/** An archive unpacked into memory: regular files by path (relative to the collection root) and folders. */
export interface ExtractedArchive {
  files: Map<string, Buffer>;
  dirs: Set<string>;
  unpackedBytes: number;
}

const GZIP_MAGIC = [0x1f, 0x8b];

/**
 * Unpacks a gzip tar body into memory, refusing it at the first unsafe or oversized entry: every check runs
 * on the header, before the entry's data is read, so a hostile archive costs bounded time and memory.
 */
export function extractArchive(body: Buffer, limits: PublishLimits): Promise<ExtractedArchive> {
  if (body.length < 2 || body[0] !== GZIP_MAGIC[0] || body[1] !== GZIP_MAGIC[1]) {
    return Promise.reject(problem('archive-corrupt', 'The body is not gzip data (send a .tar.gz).'));
  }
  const files = new Map<string, Buffer>();
  const dirs = new Set<string>();
  const paths = new PathRegistry();
  let declaredBytes = 0;
  let fileCount = 0;

  const onHeader = (info: TarHeaderInfo): boolean => {
    const kind = entryKind(info.typeflag);
    if (kind === 'link') {
      throw problem(
        'archive-link',
        `The archive entry ${showPath(info.path)} is a ${info.typeflag === '2' ? 'symbolic' : 'hard'} link; publish regular files only.`,
        { path: info.path },
      );
    }
    if (kind === 'special') {
      throw problem(
        'archive-special-file',
        `The archive entry ${showPath(info.path)} is a ${describeType(info.typeflag)}; publish regular files and folders only.`,
        { path: info.path, typeflag: info.typeflag },
      );
    }
    const path = normalizeArchivePath(info.path, limits);
    if (kind === 'dir') {
      if (path !== '') {
        paths.add(path, 'dir');
        dirs.add(path);
      }
      return false;
    }
    if (path === '') throw problem('archive-unsafe-path', 'A file entry has an empty path.');
    fileCount++;
    if (fileCount > limits.maxFiles) {
      throw problem('archive-too-many-files', `The archive holds more than ${limits.maxFiles} files.`, {
        limit: limits.maxFiles,
      });
    }
    if (basename(path) === SKILL_FILE && info.size > limits.maxSkillMarkdownBytes) {
      throw problem(
        'skill-file-too-large',
        `${path} is ${info.size} bytes; a SKILL.md may be at most ${limits.maxSkillMarkdownBytes} bytes.`,
        { file: path, size: info.size, limit: limits.maxSkillMarkdownBytes },
      );
    }
    if (info.size > limits.maxFileBytes) {
      throw problem(
        'archive-file-too-large',
        `${showPath(path)} is ${info.size} bytes; a file may be at most ${limits.maxFileBytes} bytes.`,
        { file: path, size: info.size, limit: limits.maxFileBytes },
      );
    }
    declaredBytes += info.size;
    if (declaredBytes > limits.maxUnpackedBytes) {
      throw problem(
        'archive-too-large',
        `The archive unpacks to more than ${limits.maxUnpackedBytes} bytes.`,
        { limit: limits.maxUnpackedBytes },
      );
    }
    paths.add(path, 'file');
    info.path = path;
    return true;
  };

  const reader = new TarReader({
    onHeader,
    onData: (info, data) => {
      files.set(info.path, data);
    },
  });

  return new Promise<ExtractedArchive>((resolve, reject) => {
    const gunzip = createGunzip({ chunkSize: 64 * 1024 });
    const tarLimit = maxTarBytes(limits);
    let inflated = 0;
    let failure: HttpProblem | undefined;
    const fail = (err: unknown) => {
      if (failure) return;
      failure = isHttpProblem(err) ? err : problem('archive-corrupt', 'The archive could not be read.');
      gunzip.destroy();
      reject(failure);
    };
    gunzip.on('data', (chunk: Buffer) => {
      if (failure) return;
      inflated += chunk.length;
      if (inflated > tarLimit) {
        return fail(
          problem('archive-too-large', `The archive unpacks to more than ${tarLimit} bytes of tar data.`, {
            limit: limits.maxUnpackedBytes,
          }),
        );
      }
      if (inflated > limits.ratioCheckAfterBytes) {
        const ratio = inflated / Math.max(gunzip.bytesWritten, 1);
        if (ratio > limits.maxCompressionRatio) {
          return fail(
            problem(
              'archive-compression-ratio',
              `The archive inflates more than ${limits.maxCompressionRatio} times its compressed size (a decompression bomb?).`,
              { limit: limits.maxCompressionRatio },
            ),
          );
        }
      }
      try {
        reader.push(chunk);
      } catch (err) {
        fail(err);
      }
    });
    gunzip.on('error', (err: NodeJS.ErrnoException) => {
      if (failure) return;
      // zlib says "unexpected end of file" when the stream stops before the gzip trailer.
      if (err.code === 'Z_BUF_ERROR' || /unexpected end/i.test(err.message)) {
        fail(problem('archive-truncated', 'The gzip stream ends before its end (truncated upload?).'));
      } else {
        fail(problem('archive-corrupt', `The gzip data is corrupt (${err.code ?? 'zlib error'}).`));
      }
    });
    gunzip.on('end', () => {
      if (failure) return;
      try {
        reader.end();
      } catch (err) {
        return fail(err);
      }
      resolve({ files, dirs, unpackedBytes: declaredBytes });
    });
    gunzip.end(body);
  });
}

function entryKind(typeflag: string): 'file' | 'dir' | 'link' | 'special' {
  if (typeflag === '0' || typeflag === '7') return 'file';
  if (typeflag === '5') return 'dir';
  if (typeflag === '1' || typeflag === '2') return 'link';
  return 'special';
}

function describeType(typeflag: string): string {
  switch (typeflag) {
    case '3':
      return 'character device';
    case '4':
      return 'block device';
    case '6':
      return 'FIFO';
    default:
      return `entry of unsupported type "${typeflag.replace(/[^\x20-\x7e]/g, '?')}"`;
  }
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}
