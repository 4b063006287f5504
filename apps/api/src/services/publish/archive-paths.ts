import { problem } from '../../problems.js';
import type { PublishLimits } from './limits.js';
import { showPath } from './show-path.js';

// C0 controls, DEL and C1 controls: never part of a name we store or show.
const CONTROL_CHAR = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * Checks one archive entry path and returns it normalized: relative to the collection root, no leading
 * `./`, no trailing slash ('' for the root folder itself). Refuses absolute paths, `..`, `.` and empty
 * segments, backslashes (a Windows separator some unpackers honour) and control characters.
 */
export function normalizeArchivePath(raw: string, limits: PublishLimits): string {
  let path = raw;
  while (path.startsWith('./')) path = path.slice(2);
  if (path === '.' || path === '') return '';
  if (path.startsWith('/')) throw unsafe(raw, 'it is absolute');
  if (path.includes('\\')) throw unsafe(raw, 'it holds a backslash');
  if (CONTROL_CHAR.test(path)) throw unsafe(raw, 'it holds a control character');
  if (path.endsWith('/')) path = path.slice(0, -1);
  const segments = path.split('/');
  for (const segment of segments) {
    if (segment === '..') throw unsafe(raw, 'it climbs out of the collection with ".."');
    if (segment === '.' || segment === '') throw unsafe(raw, 'it holds an empty or "." segment');
    // Compatibility forms (fullwidth "．．", one-dot leaders, fullwidth solidus...) that a file system,
    // an unpacker or a reader's eye may fold into "..", "." or a separator.
    const folded = segment.normalize('NFKC');
    if (folded === '..' || folded === '.' || /[/\\]/.test(folded)) {
      throw unsafe(
        raw,
        `the name ${JSON.stringify(segment)} reads as ${JSON.stringify(folded)} once normalized`,
      );
    }
  }
  if ([...path].length > limits.maxPathLength) {
    throw problem(
      'archive-path-too-long',
      `The path ${showPath(path)} is longer than ${limits.maxPathLength} characters.`,
      { limit: limits.maxPathLength },
    );
  }
  const longSegment = segments.find((s) => Buffer.byteLength(s, 'utf8') > limits.maxSegmentBytes);
  if (longSegment !== undefined) {
    throw problem(
      'archive-path-too-long',
      `A name in ${showPath(path)} is longer than ${limits.maxSegmentBytes} bytes.`,
      { limit: limits.maxSegmentBytes },
    );
  }
  return path;
}

function unsafe(raw: string, why: string) {
  return problem('archive-unsafe-path', `The archive entry ${showPath(raw)} is refused: ${why}.`, {
    path: raw.slice(0, 512),
  });
}

/**
 * Tracks every path of an archive (files, directories, and the directories files imply) to refuse exact
 * duplicates and paths that only differ by letter case or Unicode normalization: they would overwrite each
 * other on case-insensitive file systems (macOS, Windows) when a member saves the collection.
 */
export class PathRegistry {
  private readonly byKey = new Map<string, { path: string; kind: 'file' | 'dir' }>();

  /** Registers a file (and its parent folders) or a folder. */
  add(path: string, kind: 'file' | 'dir'): void {
    const segments = path.split('/');
    for (let i = 1; i < segments.length; i++) this.register(segments.slice(0, i).join('/'), 'dir');
    this.register(path, kind);
  }

  private register(path: string, kind: 'file' | 'dir'): void {
    const key = path.normalize('NFC').toLowerCase();
    const seen = this.byKey.get(key);
    if (!seen) {
      this.byKey.set(key, { path, kind });
      return;
    }
    if (seen.path !== path) {
      throw problem(
        'archive-case-collision',
        `The paths ${showPath(seen.path)} and ${showPath(path)} differ only by letter case or Unicode form.`,
        { paths: [seen.path, path] },
      );
    }
    if (kind === 'dir' && seen.kind === 'dir') return;
    throw problem(
      'archive-duplicate-path',
      `The path ${showPath(path)} appears more than once in the archive.`,
      {
        path,
      },
    );
  }
}
