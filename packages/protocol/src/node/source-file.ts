import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseSourceStamp, type SourceStamp } from '../source-stamp.js';

/** The stamp a saved copy carries: `.atskills/<disk path>/.source` (SPEC 1.5). */
export const SOURCE_FILE = '.source';

/** The `.source` stamp of the saved copy in `dir`; throws when it is missing or does not parse. */
export async function readSourceStamp(dir: string): Promise<SourceStamp> {
  return parseSourceStamp(await readFile(path.join(dir, SOURCE_FILE), 'utf8'));
}

/** The `.source` stamp of the saved copy in `dir`, read synchronously; undefined when missing or unreadable. */
export function trySourceStampSync(dir: string): SourceStamp | undefined {
  try {
    return parseSourceStamp(readFileSync(path.join(dir, SOURCE_FILE), 'utf8'));
  } catch {
    return undefined;
  }
}
