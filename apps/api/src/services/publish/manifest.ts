import { createHash } from 'node:crypto';

/** One file of a manifest. */
export interface ManifestFile {
  path: string;
  size: number;
  sha256: string;
}

/** sha256 (hex) of some bytes. */
export function sha256Hex(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Sorts manifest files by path in code-unit order (the canonical order). */
export function sortManifest<T extends ManifestFile>(files: T[]): T[] {
  return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * The revision of a set of files: sha256 over its canonical manifest, one `<sha256> <size> <path>\n` line per
 * file in path order. Identical content gives the same revision whoever publishes it, whenever.
 */
export function manifestRevision(files: readonly ManifestFile[]): string {
  const sorted = sortManifest([...files]);
  const hash = createHash('sha256');
  for (const f of sorted) hash.update(`${f.sha256} ${f.size} ${JSON.stringify(f.path)}\n`, 'utf8');
  return hash.digest('hex');
}
