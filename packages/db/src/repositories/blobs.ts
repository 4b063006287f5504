import type { SafetyFinding } from '@atskills/protocol';
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Database, Executor } from '../client.js';
import { blobs, safetyVerdicts } from '../schema/blobs.js';
import { batches, chunks, uniqueBy } from './batches.js';

// Table family `blobs` and `safety_verdicts` (src/schema/blobs.ts): file contents by sha256 and the
// scanner's verdicts by content hash, both content-addressed and shared by every skill that holds them.

/** A safety verdict to cache under a skill folder's content hash. */
export interface SafetyVerdictRow {
  contentSha256: string;
  scannerVersion: string;
  flags: SafetyFinding[];
}

/** Stores blobs content-addressed (what is stored already is kept). */
export async function storeBlobs(
  tx: Executor,
  rows: readonly { sha256: string; size: number; content: Buffer }[],
): Promise<void> {
  // One order for every writer: two crawls storing overlapping blobs in different orders deadlock on the
  // unique index (each waits for the other's uncommitted row); sorted by digest, one simply waits.
  const sorted = uniqueBy(rows, (b) => b.sha256).sort((a, b) =>
    a.sha256 < b.sha256 ? -1 : a.sha256 > b.sha256 ? 1 : 0,
  );
  for (const batch of batches(sorted, (b) => b.size)) {
    await tx.insert(blobs).values(batch).onConflictDoNothing({ target: blobs.sha256 });
  }
}

/** The blobs with these hashes that are already stored (so a publish can skip re-sending them). */
export async function existingBlobHashes(db: Executor, hashes: string[]): Promise<Set<string>> {
  if (hashes.length === 0) return new Set();
  const rows = await db.select({ sha256: blobs.sha256 }).from(blobs).where(inArray(blobs.sha256, hashes));
  return new Set(rows.map((r) => r.sha256));
}

/** File contents by sha256 (missing hashes are simply absent from the map). */
export async function readBlobs(db: Database, hashes: string[]): Promise<Map<string, Buffer>> {
  const unique = [...new Set(hashes)];
  const out = new Map<string, Buffer>();
  if (unique.length === 0) return out;
  const rows = await db
    .select({ sha256: blobs.sha256, content: blobs.content })
    .from(blobs)
    .where(inArray(blobs.sha256, unique));
  for (const row of rows) out.set(row.sha256, Buffer.from(row.content));
  return out;
}

/**
 * Caches a crawl's verdicts, a chunk per statement; a verdict stored under an older scanner version is
 * replaced (the crawler re-scans content whose verdict is of another version).
 */
export async function storeCrawlVerdicts(tx: Executor, verdicts: SafetyVerdictRow[]): Promise<void> {
  for (const batch of chunks(verdicts)) {
    await tx
      .insert(safetyVerdicts)
      .values([...new Map(batch.map((v) => [v.contentSha256, v])).values()])
      .onConflictDoUpdate({
        target: safetyVerdicts.contentSha256,
        set: { scannerVersion: sql`excluded.scanner_version`, flags: sql`excluded.flags` },
      });
  }
}

/** Caches the verdicts of published or linked skills; a verdict stored already is kept. */
export async function insertHubVerdicts(tx: Executor, verdicts: SafetyVerdictRow[]): Promise<void> {
  if (verdicts.length > 0) await tx.insert(safetyVerdicts).values(verdicts).onConflictDoNothing();
}

/** Cached safety verdicts by content hash, for one scanner version. */
export async function cachedSafetyVerdicts(
  db: Executor,
  contentHashes: string[],
  scannerVersion: string,
): Promise<Map<string, SafetyFinding[]>> {
  if (contentHashes.length === 0) return new Map();
  const rows = await db
    .select()
    .from(safetyVerdicts)
    .where(
      and(
        inArray(safetyVerdicts.contentSha256, contentHashes),
        eq(safetyVerdicts.scannerVersion, scannerVersion),
      ),
    );
  return new Map(rows.map((r) => [r.contentSha256, r.flags as SafetyFinding[]]));
}

/** The scanner's stored findings for the first of these content hashes that has a verdict. */
export async function findSafetyVerdict(
  db: Executor,
  contentHashes: string[],
): Promise<SafetyFinding[] | undefined> {
  if (contentHashes.length === 0) return undefined;
  const rows = await db
    .select({ key: safetyVerdicts.contentSha256, flags: safetyVerdicts.flags })
    .from(safetyVerdicts)
    .where(inArray(safetyVerdicts.contentSha256, contentHashes));
  for (const key of contentHashes) {
    const row = rows.find((r) => r.key === key);
    if (row) return row.flags as SafetyFinding[];
  }
  return undefined;
}
