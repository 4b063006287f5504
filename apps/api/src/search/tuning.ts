/**
 * Every tuning knob of the in-memory search engine and of the query analysis the engines share, in one
 * place: what each one trades is said beside it, and apps/api/src/search/README.md gives the measured
 * effect of changing the ones that move relevance or speed. The Postgres engine's own knobs live with its
 * SQL (packages/db/src/repositories/search.ts); the one both engines must agree on, USES_STAR_WEIGHT,
 * is defined there and imported here.
 */
import { USES_STAR_WEIGHT } from '@atskills/db';

// ---- Query analysis (relevance/analyze.ts; both engines) ----

/** Most words a query is read for; the rest are ignored (and reported so). */
export const MAX_QUERY_WORDS = 16;
/** Longest word indexed or searched; longer runs are hashes, base64 or noise. */
export const MAX_WORD_LENGTH = 40;
/** Typos allowed in a word: one from this length, two from TWO_TYPOS_FROM (Meilisearch's defaults). */
export const ONE_TYPO_FROM = 4;
export const TWO_TYPOS_FROM = 8;

// ---- Text scoring: BM25F (memory/inverted-index.ts) ----

/** Weight of a match in each field, in FIELDS order: name, description, headings, body (BM25F boosts). */
export const FIELD_BOOST = [6, 3, 1.5, 0.6] as const;
/** BM25 length normalisation per field (0: length ignored, 1: fully normalised). */
export const FIELD_B = [0.75, 0.75, 0.75, 0.8] as const;
/** Typical field lengths in words, for length normalisation (fixed, so updates never rescale scores). */
export const FIELD_AVG = [2, 30, 20, 600] as const;
/** BM25 saturation: how fast repeating a word stops adding to a score. */
export const K1 = 4;
/** Body words indexed per document: bounds memory; headings are indexed whole. */
export const MAX_BODY_WORDS = 1500;
/** Smallest idf of a term (BM25's idf floored, so a word nearly every skill holds still counts a little). */
export const IDF_FLOOR = 0.05;

// ---- Candidate drawing (memory/inverted-index.ts) ----

/**
 * Candidates the lists of a query draw in all (a long list gives its strongest postings); past a few
 * hundred results nobody pages, and every candidate costs a full score.
 */
export const CANDIDATE_BUDGET = 2000;
/** Candidates the word as typed draws at least, however many words the query has. */
export const MIN_SLOT_CANDIDATES = 300;
/** Candidates a completion, correction or synonym draws at least. */
export const MIN_EXPANSION_CANDIDATES = 20;

/** How many candidates a query's lists draw: in all, and at least per slot (the word as typed). */
export interface CandidateDraw {
  budget: number;
  perSlot: number;
}

/** The draw of a search page: CANDIDATE_BUDGET and MIN_SLOT_CANDIDATES. */
export const SEARCH_DRAW: CandidateDraw = { budget: CANDIDATE_BUDGET, perSlot: MIN_SLOT_CANDIDATES };
/**
 * A term's postings are read in one pass when they are at most this many times the candidates, else found
 * by galloping search per candidate (speed only: both find the same postings).
 */
export const SCAN_RATIO = 3;
/**
 * Lists at least this long get a rank directory by default: it costs a quarter of a byte per slot of the
 * index (14 KiB at 57k documents), next to the list's own 8 bytes a posting (speed only).
 */
export const RANK_DIRECTORY_MIN = 2048;

// ---- Query expansion (memory/skill-index.ts plan) ----

/** Weight of a completion of an unfinished word (the word as typed weighs 1). */
export const PREFIX_WEIGHT = 0.7;
/** Weight of a completion of a word the index holds (most likely finished already). */
export const KNOWN_PREFIX_WEIGHT = 0.3;
/** A word the index holds is also read as a near word that many times more common. */
export const RARE_WORD_RATIO = 20;
/** Weight of a correction by its number of typos (index 0 unused: the word itself). */
export const TYPO_WEIGHT = [1, 0.6, 0.4] as const;
/** Weight of a synonym's words. */
export const SYNONYM_WEIGHT = 0.8;
/** Completions of an unfinished word taken at most. */
export const MAX_COMPLETIONS = 12;
/**
 * Completions of a word the index holds (most likely finished): few, each a posting list every candidate
 * is scored against.
 */
export const MAX_KNOWN_COMPLETIONS = 6;
/** Corrections of a word taken at most. */
export const MAX_CORRECTIONS = 3;
/**
 * Vocabulary words a typed word may stand for in a name ("exact name first" through typos), more than it is
 * corrected to: "creater" is one typo from "create", "created" and "creates" (all more common, and one
 * stem) before "creator", and "skill creater" is the name skill-creator.
 */
export const MAX_NAME_SPELLINGS = 8;
/**
 * Spellings of a name through its words' readings looked up at most (one a sorted-name search): past it,
 * the candidates' names are compared with the readings instead, so an odd name drawn by none of its words
 * may be missed.
 */
export const MAX_NAME_LOOKUPS = 512;
/** Shortest word completed as a prefix. */
export const MIN_PREFIX = 3;
/** Scoring slots of a query at most (words plus synonym phrases standing alone). */
export const MAX_SCORING_SLOTS = 30;

// ---- Ranking (memory/skill-index.ts) ----

/** Relevance added for the exact name, so it comes first (a text score stays far below it). */
export const EXACT_NAME = 1000;
/**
 * Added on top of EXACT_NAME when the name is the query as typed: it comes before names that are the query
 * only through left-out separators or a corrected word ("styleguide" before "style-guide"), as SPEC 2.1's
 * "the exact name comes first" reads and the Postgres engine ranks.
 */
export const LITERAL_NAME = 1000;
/** Relevance added for a name the query starts (search-as-you-type). */
export const NAME_PREFIX = 200;
/** Sorted names a name-prefix query walks at most (a prefix shared by more names is not telling). */
export const MAX_PREFIXED_NAMES = 5_000;
/** Largest lift popularity gives: 8% (a match weaker by more than that is never lifted over a stronger one). */
export const PRIOR_MAX = 0.08;
/** Stars at which the prior is full. */
export const PRIOR_FULL_STARS = 100_000;
/** What one distinct client a week weighs in the prior, in stars (shared with the Postgres engine). */
export { USES_STAR_WEIGHT };
/** Smallest idf a scoring slot weighs in coverage (a word every skill holds still counts a little). */
export const MIN_SLOT_IDF = 0.05;

// ---- Index upkeep (memory-engine.ts, memory/skill-index.ts) ----

/** Skills read per query while the index is built. */
export const BUILD_BATCH = 2_000;
/** A change notification waits this long for others before the index catches up (crawls write in bursts). */
export const SYNC_DEBOUNCE_MS = 50;
/** Catch-up even without notifications (a feed that is down loses none: the scan is by transaction id). */
export const SYNC_INTERVAL_MS = 30_000;
/** Weekly uses (the popularity prior) are re-read at most this often: uses roll up daily, not per write. */
export const USES_REFRESH_MS = 60_000;
/**
 * Scoring statistics are frozen again once the live documents drift outside these bounds of those they
 * were taken over (a fifth either way): until then a score, and so a cursor, survives index changes.
 */
export const STATISTICS_DRIFT = { below: 0.8, above: 1.25 } as const;
/** Dead postings are dropped once they are this share of all postings, and at least COMPACT_MIN_DEAD. */
export const COMPACT_DEAD_SHARE = 0.25;
export const COMPACT_MIN_DEAD = 10_000;
/** Rough per-item costs of the JavaScript structures (measured with heap snapshots on the shared corpus). */
export const BYTES_PER_POSTING = 7;
export const BYTES_PER_WORD = 90;
export const BYTES_PER_DOCUMENT = 700;
