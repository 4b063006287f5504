import { createHash } from 'node:crypto';

/** Byte order of UTF-8, which is what Postgres `collate "C"` sorts by, so both sides agree. */
export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * The revision of a menu (a folder of skills): sha256 over its items' `identity@revision` lines in UTF-8
 * byte order, so any change to any listed skill - or to the set of skills - changes it. Computed the
 * same way by the search SQL for collection results.
 */
export function menuRevision(items: { identity: string; revision: string }[]): string {
  const lines = items.map((i) => `${i.identity}@${i.revision}`).sort(compareUtf8);
  return createHash('sha256').update(lines.join('\n'), 'utf8').digest('hex');
}
