import type { DenseModelSnapshot } from './dense.js';
import type { SemanticModelSnapshot } from './model.js';

/** The name the suggestion model is stored under (model_snapshots). */
export const SUGGESTION_SNAPSHOT = 'suggestion-model';
/**
 * The code a stored model depends on (snapshotFormat): this folder, the analyser, what a held skill is made
 * of (headings, hits).
 */
export const SUGGESTION_SOURCES = ['suggest', 'search/relevance', 'search/memory/skill-index', 'search/hits'];

/** What the suggestion engine keeps, as a snapshot stores it: the two models and what it holds per skill. */
export interface SuggestionSnapshot<Held> {
  semantic: SemanticModelSnapshot;
  dense: DenseModelSnapshot;
  /** Each held skill: its identity, its slot in the models, and what the engine holds of it. */
  entries: [identity: string, slot: number, held: Held][];
  nextSlot: number;
}
