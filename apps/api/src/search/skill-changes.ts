import {
  type ChangedSkill,
  type ChangeMark,
  changedSkills,
  currentChangeMark,
  type Database,
  liveSkillIdentities,
  loadSearchDocumentsById,
  type SearchDocumentRow,
} from '@atskills/db';
import { TimeSlicer } from '../runtime/time-slice.js';
import { BUILD_BATCH } from './tuning.js';

/** What an in-memory structure holds of the skills, and how it takes each kind of change. */
export interface SkillHolder {
  /** The revision held for an identity, or undefined when it is not held. */
  revisionOf(identity: string): string | undefined;
  /** Every identity held (read once, when rows may have been deleted outright). */
  identities(): Iterable<string>;
  /** How many identities are held. */
  readonly size: number;
  /** The skill is gone or no longer live. */
  remove(identity: string): void;
  /** The visibility the skill is held with (undefined when not held). */
  visibilityOf(identity: string): string | undefined;
  /** Same text and visibility, new stars or flags (a report decided). */
  patch(row: ChangedSkill): void;
  /** New text (or a new skill): its whole document. */
  upsert(row: SearchDocumentRow): void;
}

/**
 * What one catch-up found: null when the transaction counter wrapped and the caller must rebuild. `changed`
 * counts the rows written since the mark (rows seen already may come again: the mark is the oldest
 * transaction running anywhere on the server), `applied` the skills removed or reloaded (what a holder
 * really took).
 */
export type SkillChangeScan = { nextMark: ChangeMark; changed: number; applied: number } | null;

/**
 * Applies every skill change committed since `mark` to `holder`: removals, patches of stars, visibility
 * and flags, reloads of changed text (in batches), and identities skills left (deleted outright or
 * renamed). The search index and the suggestion model both keep their skills current through this one scan,
 * each reloading in its own build's slices.
 */
export async function applySkillChanges(
  db: Database,
  mark: ChangeMark,
  holder: SkillHolder,
  slice = new TimeSlicer(),
): Promise<SkillChangeScan> {
  const nextMark = await currentChangeMark(db);
  const changes = await changedSkills(db, mark);
  if (!changes) return null;
  let applied = 0;
  const remove = (identity: string) => {
    if (holder.revisionOf(identity) === undefined) return;
    holder.remove(identity);
    applied++;
  };
  // What a skill left first: an identity deleted and written again since the mark is in `rows` too.
  for (const identity of changes.left) remove(identity);
  const reload: number[] = [];
  for (const row of changes.rows) {
    if (!row.live) remove(row.identity);
    // A skill made private or public is reloaded: which readers' statistics count it changes with it.
    else if (
      holder.revisionOf(row.identity) === row.revision &&
      holder.visibilityOf(row.identity) === row.visibility
    )
      holder.patch(row);
    else reload.push(row.id);
  }
  // A batch of reloads is a second of work for the suggestion model: requests are answered in between.
  for (let i = 0; i < reload.length; i += BUILD_BATCH) {
    for (const row of await loadSearchDocumentsById(db, reload.slice(i, i + BUILD_BATCH))) {
      if (slice.due()) await slice.pause();
      holder.upsert(row);
      applied++;
    }
  }
  if (changes.liveCount !== holder.size) {
    // Rows deleted outright more than the tombstones' seven days ago (a follower that long behind), or
    // anything else the holder missed: drop what is no longer there.
    const live = new Set(await liveSkillIdentities(db));
    for (const identity of [...holder.identities()]) if (!live.has(identity)) remove(identity);
  }
  return { nextMark, changed: changes.rows.length, applied };
}
