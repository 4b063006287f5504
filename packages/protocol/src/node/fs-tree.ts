import { isUtf8 } from 'node:buffer';
import { lstat, mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { TreeEntry } from '../leaf-rule.js';

/**
 * Walks a local folder into a tree listing for the leaf rule: paths relative to `root` with '/', symlinks
 * and special files reported but never followed, `.git` never entered. A missing root gives [].
 */
export async function walkFolder(root: string): Promise<TreeEntry[]> {
  const out: TreeEntry[] = [];
  const visit = async (rel: string): Promise<void> => {
    let raw: Buffer[];
    try {
      raw = await readdir(rel === '' ? root : path.join(root, rel), { encoding: 'buffer' });
    } catch (error) {
      if (rel === '' && isMissing(error)) return;
      throw error;
    }
    const names: string[] = [];
    for (const bytes of raw) {
      // Read as text, such a name would be changed (U+FFFD) and then missing: say which one it is instead.
      if (!isUtf8(bytes)) {
        const shown = rel === '' ? bytes.toString('utf8') : `${rel}/${bytes.toString('utf8')}`;
        throw Object.assign(new Error(`${shown}: the file name is not valid UTF-8; rename it`), {
          code: 'EILSEQ',
        });
      }
      names.push(bytes.toString('utf8'));
    }
    for (const name of names.sort()) {
      if (name === '.git') continue;
      const childRel = rel === '' ? name : `${rel}/${name}`;
      const stat = await lstat(path.join(root, childRel));
      if (stat.isSymbolicLink()) out.push({ path: childRel, type: 'symlink' });
      else if (stat.isDirectory()) {
        out.push({ path: childRel, type: 'dir' });
        await visit(childRel);
      } else if (stat.isFile()) {
        out.push({
          path: childRel,
          type: 'file',
          size: stat.size,
          mode: stat.mode & 0o111 ? '100755' : '100644',
        });
      } else out.push({ path: childRel, type: 'other' });
    }
  };
  await visit('');
  return out;
}

/** True for "no such file or directory" (and "not a directory") errors. */
export function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  // A name longer than the file system allows cannot be there either (an identity may be 512 characters).
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'ENAMETOOLONG';
}

/**
 * `mkdir -p`, written out because Node's own (`mkdir(dir, { recursive: true })`) never returns when a
 * folder cannot be made although its parent exists (under /proc it retries the same mkdir forever, one
 * CPU at 100%): here each missing folder is made once, and its error is thrown.
 */
export async function makeDirectory(dir: string): Promise<void> {
  const parent = path.dirname(dir);
  try {
    await mkdir(dir);
    return;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    if (code !== 'ENOENT' || parent === dir) throw error;
  }
  await makeDirectory(parent);
  try {
    await mkdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}
