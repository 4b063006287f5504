import type { ChangeMark, Database } from '@atskills/db';
import {
  loadSnapshot,
  type SnapshotRead,
  type SnapshotWrite,
  saveSnapshot,
  snapshotFormat,
} from '../runtime/snapshots.js';
import type { TimeSlicer } from '../runtime/time-slice.js';
import type { DenseModelSnapshot } from './dense.js';
import type { SemanticModelSnapshot } from './model.js';

/** The name the suggestion model is stored under (model_snapshots). */
export const SUGGESTION_SNAPSHOT = 'suggestion-model';
/**
 * The code a stored model depends on (snapshotFormat): this folder, the analyser, what a held skill is made
 * of (headings, hits).
 */
const SOURCES = ['suggest', 'search/relevance', 'search/memory/skill-index', 'search/hits'];

/** What the suggestion engine keeps, as a snapshot stores it: the two models and what it holds per skill. */
export interface SuggestionSnapshot<Held> {
  semantic: SemanticModelSnapshot;
  dense: DenseModelSnapshot;
  /** Each held skill: its identity, its slot in the models, and what the engine holds of it. */
  entries: [identity: string, slot: number, held: Held][];
  nextSlot: number;
}

/** Stores the suggestion engine's snapshot, current to `mark`. */
export async function saveSuggestionSnapshot<Held>(
  db: Database,
  mark: ChangeMark,
  snapshot: SuggestionSnapshot<Held>,
  slice: TimeSlicer,
): Promise<SnapshotWrite> {
  return saveSnapshot(
    db,
    {
      name: SUGGESTION_SNAPSHOT,
      format: await snapshotFormat(SOURCES),
      mark,
      skills: snapshot.entries.length,
      value: snapshot,
    },
    slice,
  );
}

/** The stored snapshot of the suggestion engine, when this code can use it (see loadSnapshot). */
export async function loadSuggestionSnapshot<Held>(
  db: Database,
  currentMark: ChangeMark,
  slice: TimeSlicer,
): Promise<SnapshotRead<SuggestionSnapshot<Held>>> {
  return loadSnapshot(db, SUGGESTION_SNAPSHOT, await snapshotFormat(SOURCES), currentMark, slice);
}
