import { lstatSync } from 'node:fs';
import path from 'node:path';

/**
 * The project root: the nearest folder at or above `start` that holds `.atskills/`, else `start` itself.
 * Synchronous stats: a handful per run, cheaper than the promise machinery on the client's start-up path.
 */
export async function findProjectDir(start: string): Promise<string> {
  let dir = path.resolve(start);
  for (;;) {
    if (lstatSync(path.join(dir, '.atskills'), { throwIfNoEntry: false })?.isDirectory()) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) return path.resolve(start);
    dir = parent;
  }
}
