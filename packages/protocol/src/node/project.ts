import { lstat } from 'node:fs/promises';
import path from 'node:path';

/** The project root: the nearest folder at or above `start` that holds `.atskills/`, else `start` itself. */
export async function findProjectDir(start: string): Promise<string> {
  let dir = path.resolve(start);
  for (;;) {
    try {
      if ((await lstat(path.join(dir, '.atskills'))).isDirectory()) return dir;
    } catch {
      // not here; look further up
    }
    const parent = path.dirname(dir);
    if (parent === dir) return path.resolve(start);
    dir = parent;
  }
}
