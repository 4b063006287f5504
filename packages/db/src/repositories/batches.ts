// Rows per multi-row insert; blob batches are also cut by size so one statement stays a few MiB.
const BATCH_ROWS = 100;
const BATCH_BYTES = 8 * 1024 * 1024;

/** Rows per statement of a crawl's writes (skills, revisions, verdicts, unchanged marks). */
const CHUNK = 200;

/** Splits rows into insert batches by count and weight (bytes), so one statement stays a few MiB. */
export function* batches<T>(items: readonly T[], weight: (item: T) => number): Generator<T[]> {
  let batch: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const w = weight(item);
    if (batch.length > 0 && (batch.length >= BATCH_ROWS || bytes + w > BATCH_BYTES)) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(item);
    bytes += w;
  }
  if (batch.length > 0) yield batch;
}

/** Splits rows into fixed-size chunks (a crawl's writes: one statement per chunk). */
export function chunks<T>(items: T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** The first item per key. */
export function uniqueBy<T>(items: readonly T[], key: (item: T) => string): T[] {
  const seen = new Set<string>();
  return items.filter((item) => {
    const k = key(item);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
