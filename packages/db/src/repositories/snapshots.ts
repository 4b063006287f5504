import { and, eq, sql } from 'drizzle-orm';
import type { Database } from '../client.js';
import { modelSnapshotParts, modelSnapshots } from '../schema/snapshots.js';

// Table family `model_snapshots` (src/schema/snapshots.ts): persisted in-memory structures of the API.

/** What a stored snapshot says of itself (its parts are read one at a time). */
export interface ModelSnapshotHeader {
  name: string;
  /** The format and code that wrote it: a reader of another format rebuilds instead. */
  format: string;
  /** The change mark its content is current to. */
  mark: string;
  skills: number;
  /** Bytes of all its parts. */
  bytes: number;
  parts: number;
  createdAt: Date;
}

/**
 * Stores a snapshot under `name` in place of the one before, in one transaction (a reader sees the old
 * snapshot or the new one whole). Writers of one name take turns: two replicas that both built write one
 * after the other, and the last one stays.
 */
export async function saveModelSnapshot(
  db: Database,
  snapshot: { name: string; format: string; mark: string; skills: number; parts: readonly Buffer[] },
): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`model_snapshot:${snapshot.name}`}))`);
    await tx.delete(modelSnapshots).where(eq(modelSnapshots.name, snapshot.name));
    await tx.insert(modelSnapshots).values({
      name: snapshot.name,
      format: snapshot.format,
      mark: snapshot.mark,
      skills: snapshot.skills,
      bytes: snapshot.parts.reduce((sum, p) => sum + p.length, 0),
      parts: snapshot.parts.length,
    });
    // A statement per part: parts are megabytes each.
    for (const [part, content] of snapshot.parts.entries()) {
      await tx.insert(modelSnapshotParts).values({ name: snapshot.name, part, content });
    }
  });
}

/** The stored snapshot of `name`, or null. */
export async function modelSnapshotHeader(db: Database, name: string): Promise<ModelSnapshotHeader | null> {
  const [row] = await db.select().from(modelSnapshots).where(eq(modelSnapshots.name, name));
  return row ?? null;
}

/** One part of a stored snapshot, or null when it is not there (the snapshot was replaced meanwhile). */
export async function modelSnapshotPart(db: Database, name: string, part: number): Promise<Buffer | null> {
  const [row] = await db
    .select({ content: modelSnapshotParts.content })
    .from(modelSnapshotParts)
    .where(and(eq(modelSnapshotParts.name, name), eq(modelSnapshotParts.part, part)));
  return row ? Buffer.from(row.content) : null;
}

/** Deletes the snapshot of `name` (its parts go with it). */
export async function deleteModelSnapshot(db: Database, name: string): Promise<void> {
  await db.delete(modelSnapshots).where(eq(modelSnapshots.name, name));
}
