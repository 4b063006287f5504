import {
  type ChangeMark,
  currentChangeMark,
  type Database,
  loadSearchDocuments,
  type ReadScope,
  type SearchDocumentRow,
} from '@atskills/db';
import { refusingVerdict } from '@atskills/protocol';
import { type SnapshotEvent, SnapshotKeeper } from '../runtime/snapshots.js';
import { TimeSlicer } from '../runtime/time-slice.js';
import { ChangeFollower, type FollowedStructure } from '../search/change-follower.js';
import type { SearchEngine, SearchHit } from '../search/engine.js';
import { flagSummary, hitFromRow } from '../search/hits.js';
import type { StatisticsView } from '../search/memory/group-statistics.js';
import { headingsOf } from '../search/memory/skill-index.js';
import { findSynonyms, translationsOf } from '../search/relevance/analyze.js';
import { applySkillChanges } from '../search/skill-changes.js';
import { BUILD_BATCH, type CandidateDraw } from '../search/tuning.js';
import { flagRules } from '../services/flags.js';
import {
  calibrated,
  type Evidence,
  isTelling,
  NAMED_WHOLE,
  type Reranker,
  rerankValue,
  SHIPPED_RERANKER,
  shownScore,
  type TaskEvidence,
  taskPrior,
  weighsService,
} from './abstain.js';
import { copyGroups, shownCopy } from './copies.js';
import { DenseModel } from './dense.js';
import {
  createEmbeddingsClient,
  type EmbeddingsClient,
  type EmbeddingsSettings,
  skillEmbeddingText,
  type VectorSearch,
  VectorStore,
} from './embeddings.js';
import { byRank, diversify, type RankedList, reciprocalRankFusion } from './fusion.js';
import { grown } from './grow.js';
import { type PhraseQuoter, phraseQuoter, type Quote } from './matched.js';
import { type QueryTerm, SemanticModel } from './model.js';
import { extractNeeds, type MessageNeeds, MIN_PART_WORDS, type Need, taskSignal } from './needs.js';
import { SUGGESTION_SNAPSHOT, SUGGESTION_SOURCES, type SuggestionSnapshot } from './snapshot.js';
import { cachedTermOf } from './term-cache.js';
import { type ConnectionIntake, type TurnOptions, TurnRefusedError, Turns } from './turns.js';

/**
 * Seconds a client waits before asking again while the model builds: it takes 1-2 minutes at 57,000
 * skills (docs/performance.md) and a few seconds in a small hub.
 */
export const BUILDING_RETRY_AFTER_S = 30;

/** The model is not there to answer (still building, or over its memory budget). */
export class SuggestUnavailableError extends Error {
  constructor(
    message: string,
    /** When asking again makes sense (the model builds); none when an operator must act first. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

/** One suggestion: the skill, its calibrated score, and the part of the message it answers. */
export interface Suggestion {
  hit: SearchHit;
  score: number;
  matched: string;
}

/** The answer to a message. */
export interface SuggestAnswer {
  results: Suggestion[];
  abstained: boolean;
  /**
   * Why it abstained: the message asks for nothing a skill does (`no-task`: small talk, no telling word;
   * answered before any retrieval), or no skill scored over the threshold (`no-fit`).
   */
  abstention?: 'no-task' | 'no-fit';
  /** The best candidate's calibrated score, also when abstaining (benchmarks draw the trade-off curve). */
  best?: number;
  /** With `explain`: the reranked candidates and their evidence (for fitting the calibration). */
  explained?: {
    identity: string;
    score: number;
    evidence: Evidence;
    parts: readonly number[];
    /** Its rank in each retrieval list, by `need:retrieval` (need 0 is the whole request; -1: absent). */
    ranks?: Record<string, number>;
  }[];
  /** With `explain`: whether the message holds a task for a skill, read before any skill is scored. */
  task?: TaskEvidence;
}

/** What /metrics reports about the suggestion model. */
export interface SuggestStatus {
  ready: boolean;
  documents: number;
  vocabulary: number;
  postings: number;
  relatedPairs: number;
  /** Estimated bytes of the model (and of the embedding vectors, when a service provides them). */
  bytes: number;
  vectors: number;
  /** Estimated bytes of the LSA vectors (included in `bytes`). */
  denseBytes: number;
  buildSeconds: number | null;
  /** Seconds the model took to restore from its stored snapshot (null when it was built). */
  restoreSeconds: number | null;
  /** The last build ran in a worker thread (buildElsewhere) and was loaded from what it stored. */
  builtInThread: boolean;
  /** The embeddings service failed last time it was asked (the default model answers meanwhile). */
  embeddingsError?: string;
  error?: string;
  /** Suggestions waiting for their turn on this process's event loop (see Turns). */
  queued: number;
  /** What a suggestion's turn takes lately (ms): the queue times this is the wait of the next caller. */
  turnMs: number;
}

/**
 * The caller gave up (its connection closed) before its suggestion's turn came: the work was skipped.
 * Under overload a client with a deadline (an agent's hook) leaves, and answering it anyway would only
 * make the queue behind it longer.
 */
export class SuggestAbandonedError extends Error {
  constructor() {
    super('the caller left before its suggestion was computed');
  }
}

/**
 * The caller's deadline (SuggestWaiting.deadline) comes before its turn could: the suggestions queued ahead
 * of it take longer than it waits. Refused at once, so it goes on without suggestions now rather than at
 * its deadline, and the callers queued ahead of it keep theirs.
 */
export class SuggestOverloadedError extends Error {
  constructor(
    /** Suggestions waiting ahead of it. */
    readonly ahead: number,
    /** Their estimated time (ms), 0 when the deadline had passed by its turn. */
    readonly expectedWaitMs: number,
  ) {
    super(
      expectedWaitMs > 0
        ? `${ahead} suggestions are waiting ahead of this one, about ${Math.ceil(expectedWaitMs)} ms of work, longer than its deadline allows`
        : 'its deadline passed while it waited for its turn',
    );
  }

  /** The suggestion's side of a turn refused as late. */
  static of(refused: TurnRefusedError): SuggestOverloadedError {
    return new SuggestOverloadedError(refused.ahead, refused.expectedWaitMs);
  }
}

/** How a suggestion waits for its turn: its caller leaving, and the caller's deadline. */
export type SuggestWaiting = TurnOptions;

/** The suggestion engine a plugin drives. */
export interface SuggestEngine extends FollowedStructure {
  /**
   * Suggestions for a message (`threshold`: the abstention threshold, the reranker's unless a benchmark
   * varies it). Rejects with SuggestAbandonedError when the caller left (`waiting.callerLeft`) before the
   * work began, and with SuggestOverloadedError when it could not begin in time for `waiting.deadline`.
   */
  suggest(
    message: string,
    viewer: ReadScope,
    limit: number,
    threshold?: number,
    waiting?: SuggestWaiting,
  ): Promise<SuggestAnswer>;
  /**
   * Why a suggestion asked now with `deadline` (performance.now() time) would be refused as overloaded,
   * before anything of the request is read; undefined when it would take its turn.
   */
  refusal(deadline: number): SuggestOverloadedError | undefined;
  status(): SuggestStatus;
}

export interface SuggestEngineOptions {
  /** The server's accepted connections: turns let waiting connections in first (see Turns). */
  intake?: ConnectionIntake;
  /** Refuse to hold more than this (bytes): the model then stays off and suggestions answer 503. */
  maxBytes: number;
  /** An OpenAI-compatible embeddings service; without it the model built from the index is the semantic side. */
  embeddings?: EmbeddingsSettings | EmbeddingsClient;
  onError?: (err: unknown) => void;
  /** Return each answer's candidates with their evidence (benchmarks fit the calibration on it). */
  explain?: boolean;
  /** Milliseconds a suggestion may wait for the embeddings service before it answers without it. */
  queryEmbeddingTimeoutMs?: number;
  /**
   * The reranker (SUGGEST_RERANKER; the shipped one by default). One weighing the embeddings service's
   * evidence answers only with the service's vectors: a message the service did not embed in time is
   * reranked by the shipped reranker, whose calibration does not count on that evidence.
   */
  reranker?: Reranker;
  /**
   * The embeddings-service list from the search engine's index (Meilisearch's hybrid search) instead of the
   * vectors held here; when it answers null or fails, the vectors held here answer.
   */
  vectorSearch?: VectorSearch;
  /** Postings the term model reads per word at most (READ_CAP; benchmarks compare with no cap). */
  readCap?: number;
  /** Candidates the lexical search of one need of several draws (PART_DRAW; else lexicalDraw when set). */
  partDraw?: CandidateDraw;
  /** Candidates the lexical searches draw (SUGGEST_DRAW; benchmarks compare with a search page's). */
  lexicalDraw?: CandidateDraw;
  /**
   * The first build starts once this settles: when the search index first serves (plugins/suggest.ts). Both
   * build on one event loop at start, and built side by side neither served until both were done (search
   * answering from Postgres meanwhile); a suggestion's lexical lists read that index, and on the Postgres
   * fallback each need of a message would be a Postgres search.
   */
  startAfter?: Promise<void>;
  /**
   * Milliseconds the model's build, re-mining and catch-ups hold the event loop at a time (SLICE_MS;
   * benchmarks compare with Infinity, a build that never lets requests in).
   */
  buildSliceMs?: number;
  /**
   * Keep the model in Postgres (model_snapshots, snapshot.ts): stored after each build and re-mining, loaded
   * at start in place of the first build and caught up from its change mark.
   */
  snapshots?: boolean;
  /** What happened to a snapshot (restored, stored, or why the stored one was not used), for the log. */
  onSnapshot?: (event: SnapshotEvent) => void;
  /** A model that took changes is stored again once its snapshot is this old (6 hours: snapshotDue). */
  snapshotEveryMs?: number;
  /**
   * Builds the model in another thread at the first build when no stored snapshot can be loaded, beside
   * the wait for `startAfter`: that thread stores what it built and this engine loads it, so this event
   * loop holds the load, not the build. Resolves with the build's seconds, or null when it built nothing;
   * the model is then built here, as when it rejects. Needs `snapshots`; aborted when the engine closes.
   */
  buildElsewhere?: (signal: AbortSignal) => Promise<number | null>;
  /**
   * Hold each skill's embedding text (and store it with the model): by default when `embeddings` is set.
   * A build thread sets it for a hub that has an embeddings service and will load what the thread stores.
   */
  keepEmbeddingTexts?: boolean;
}

const reciprocal = (rank: number | undefined) => (rank === undefined ? 0 : 1 / (rank + 1));
/** Candidates read from each retrieval (deeper than a page: the reranker picks among them). */
const LEXICAL_DEPTH = 30;
/**
 * Candidates a need's lexical search draws: half a search page's. A page's draw is sized for paging
 * through hundreds of hits; suggestions read the first 30 of a query of ten words or more, where scoring the
 * candidates against every word was most of the lexical search's time (see docs/performance.md).
 */
export const SUGGEST_DRAW: CandidateDraw = { budget: 1000, perSlot: 150 };
/**
 * Candidates the lexical search of one need of several draws: half the whole request's. A need's list
 * feeds the fusion at half weight and a candidate's best rank for one need; at 55,543 skills the half draw
 * judged as the full one (answerable success@1 0.716 / recall@5 0.681 against 0.711 / 0.671; a quarter
 * abstained on 0.02 more answerable messages) for about 0.6 ms less a suggestion (docs/performance.md).
 */
export const PART_DRAW: CandidateDraw = { budget: 500, perSlot: 75 };
const SEMANTIC_DEPTH = 50;
/** Candidates reranked after fusion. */
const RERANK_DEPTH = 40;
/** Weight of a synonym, and of a related term per unit of its normalised PMI, against a word of the message. */
const SYNONYM_WEIGHT = 0.8;
const RELATED_WEIGHT = 0.5;
const RELATED_PER_WORD = 4;
/** Credit of a need word found only in a skill's body, and through a related term. */
const BODY_CREDIT = 0.6;
const RELATED_CREDIT = 0.7;
/** Coverage of a need at which a skill counts as covering it (diversification). */
const COVERS = 0.5;
/**
 * Results under this score are not shown even when the best one passes the threshold: only the
 * near-certainly useless (0.04 before; at 0.01 held-out recall@5 rose from 0.810 to 0.824 on the mean over
 * shuffled folds, the right skill of an indirect message often scoring a few percent under a wrong one).
 */
const RESULT_FLOOR = 0.01;
/**
 * What a need word the skill holds in its body only weighs, against one in its name, description or
 * headings, when choosing the phrase a suggestion quotes: what a skill says it is for says why it was
 * suggested ("write any code for the new notifications feature" for a test-first skill, where body words
 * alone quoted "wrong, a couple of options and which one").
 */
const BODY_QUOTE_SHARE = 0.25;
/**
 * How many times the held words' weight of the whole request's densest phrase must exceed the quoted need's
 * for the phrase to be quoted instead. Over the judged set's 1,048 suggestions, 13 phrases changed at 2, and
 * read better in 11 ("Folder" -> "invoice number, date, vendor, VAT number and total out of each"; "current
 * resume" -> "Generate a tailored resume for this job description"); picking the need by held weight instead
 * of share changed 15, as many for the worse as for the better.
 */
const QUOTE_WHOLE_OVER = 2;
/**
 * The largest idf of the index the reranker was fitted on (the 1,482-skill shared corpus:
 * log(1 + 1482.5 / 0.5)); idf masses are expressed on that scale (see `coverage`).
 */
const IDF_REFERENCE = Math.log(1 + 1482.5 / 0.5);

/**
 * What the idf masses of an index of `size` skills are multiplied by to weigh as in the index the reranker
 * was fitted on. A smaller index has smaller idfs for the same evidence (a word one skill of ten holds has
 * idf 2.0, one of 1,482: 6.9), so they are scaled up by the ratio of largest idfs. A larger index is not
 * scaled down: an idf is a function of the share of skills holding the word, which does not shrink as the
 * index grows; scaling down by the largest idf (which grows with any word one skill holds) made a hub of
 * 55,543 skills abstain on 21% of the answerable messages (13% without: `npm run bench -- suggest --scale`).
 */
export function idfUnit(size: number): number {
  return Math.max(1, IDF_REFERENCE / Math.log(1 + (size + 0.5) / 0.5));
}
/** Times a batch of the model's build is read before the build fails. */
const BUILD_BATCH_ATTEMPTS = 4;
/** Texts sent per embeddings request while the index is embedded in the background. */
const EMBED_BATCH = 64;

interface Held {
  hit: SearchHit;
  visibility: string;
  ownerKey: string;
  revision: string;
  /**
   * What the embedding is computed from; held only with an embeddings service (9 MiB of heap at the
   * benchmark's 54,061 skills, more where skills have many headings).
   */
  text?: string;
  /** Judged malicious (a refusing verdict no dispute suppressed): held, never suggested. */
  refused: boolean;
}

/** What reading a held slot takes (engine `access`). */
const HIDDEN = 0;
const PUBLIC = 1;
const RESTRICTED = 2;

/**
 * Whether a skill's flags hold a refusing verdict (SPEC 2.8): a suggestion puts the skill in front of a
 * model, so the hub holds it back itself rather than leaving every client to filter it.
 */
function refuses(flags: SearchHit['flags']): boolean {
  return refusingVerdict(flagRules(flags)) !== undefined;
}

/**
 * A need's query terms as coverage reads them for every candidate: term ids (-1: no skill holds it), the
 * credit each gives (a word of the need: 1; a synonym or related term: less), where that credit goes (the
 * position of the need word it stands for), the need words' positions and idfs, and scratch for the credit.
 */
interface CoverageTerms {
  ids: Int32Array;
  scales: Float64Array;
  /** Per term, the position of the need word it credits (-1: none). */
  creditAt: Int32Array;
  /** Positions of the need's own words, and their idfs (same order). */
  direct: Int32Array;
  idfs: Float64Array;
  creditAll: Float64Array;
  creditTopical: Float64Array;
  credited: Uint8Array;
}

function coverageTerms(m: SemanticModel, terms: readonly QueryTerm[], view: StatisticsView): CoverageTerms {
  const position = new Map<string, number>();
  terms.forEach((q, i) => {
    if (q.term === q.of && !position.has(q.term)) position.set(q.term, i);
  });
  const direct: number[] = [];
  const idfs: number[] = [];
  terms.forEach((q, i) => {
    if (q.term !== q.of) return;
    direct.push(i);
    // A Chinese, Japanese or Korean word no skill holds is as telling as its English, not the rarest word there is.
    let idf = m.idf(q.term, view);
    if (idf === 0) {
      for (const phrase of translationsOf(q.term))
        for (const t of phrase) idf = Math.max(idf, m.idf(cachedTermOf(t), view));
    }
    idfs.push(idf);
  });
  return {
    ids: Int32Array.from(terms, (q) => m.termIdOf(q.term) ?? -1),
    scales: Float64Array.from(terms, (q) =>
      // Weight 1 and another term: a translation (queryTerms), which covers its word in full.
      q.term === q.of || q.weight === 1 ? 1 : RELATED_CREDIT * Math.min(1, q.weight / SYNONYM_WEIGHT),
    ),
    creditAt: Int32Array.from(terms, (q) => position.get(q.of) ?? -1),
    direct: Int32Array.from(direct),
    idfs: Float64Array.from(idfs),
    creditAll: new Float64Array(terms.length),
    creditTopical: new Float64Array(terms.length),
    credited: new Uint8Array(terms.length),
  };
}

/**
 * Suggestions (SPEC 2.7): finds the needs of a message, retrieves candidates lexically (the hub's search
 * engine) and semantically (the model built from the index, or an embeddings service), fuses them
 * (reciprocal-rank fusion), reranks by how much of each need a skill covers, diversifies across needs,
 * and abstains when the best calibrated score is under the threshold.
 */
export function createSuggestEngine(
  db: Database,
  search: SearchEngine,
  options: SuggestEngineOptions,
): SuggestEngine {
  let model: SemanticModel | null = null;
  /** The LSA vectors of `model`'s skills (null while a fresh model is being loaded). */
  let dense: DenseModel | null = null;
  let held: (Held | undefined)[] = [];
  /**
   * Per slot, what reading it takes (HIDDEN: nothing held, or refused; PUBLIC; RESTRICTED: the viewer's
   * namespaces decide), kept beside `held` by `hold`: every retrieval asks it of hundreds of skills, and
   * reaching each one's object cost a cache miss (about 0.2 µs at 54,061 skills) where a byte array does not.
   */
  let access = new Uint8Array(1024);
  /** Holds (or forgets, with undefined) a slot's skill, and what reading it takes. */
  const hold = (slot: number, entry: Held | undefined) => {
    held[slot] = entry;
    access = grown(access, slot + 1);
    access[slot] = !entry || entry.refused ? HIDDEN : entry.visibility === 'public' ? PUBLIC : RESTRICTED;
  };
  /** Forgets every slot (a rebuild or a restore renumbers them). */
  const holdNothing = () => {
    held = [];
    access = new Uint8Array(1024);
  };
  let slots = new Map<string, number>();
  let nextSlot = 0;
  let mark: ChangeMark | null = null;
  let buildSeconds: number | null = null;
  /** Seconds another thread took to build the model the first build is about to load (buildElsewhere). */
  let builtElsewhere: number | null = null;
  let builtInThread = false;
  const closing = new AbortController();
  let embeddingsError: string | undefined;
  const embedder: EmbeddingsClient | null = !options.embeddings
    ? null
    : 'embed' in options.embeddings
      ? options.embeddings
      : createEmbeddingsClient(options.embeddings);
  const keepTexts = options.keepEmbeddingTexts ?? embedder !== null;
  const vectors = new VectorStore();
  const turns = new Turns(options.intake);
  /** Slots waiting for their embedding. */
  const toEmbed = new Set<number>();
  let embedding: Promise<void> | null = null;

  /** What the memory budget counts: a model, its LSA vectors, the service's vectors and `skills` held skills. */
  const bytesOf = (m: SemanticModel | null, d: DenseModel | null, skills: number) =>
    (m?.stats().bytes ?? 0) + (d?.bytes() ?? 0) + vectors.bytes() + skills * 200;
  const bytes = () => bytesOf(model, dense, slots.size);

  const add = (target: SemanticModel, row: SearchDocumentRow) => {
    const old = slots.get(row.identity);
    if (old !== undefined) {
      target.delete(old);
      if (target === model) dense?.delete(old);
      hold(old, undefined);
      vectors.delete(old);
      toEmbed.delete(old);
    }
    const slot = nextSlot++;
    const headings = headingsOf(row.body);
    const hit = hitFromRow({ ...row, kind: 'skill', skillCount: null });
    target.set(
      slot,
      {
        name: row.name,
        folder: row.path.split('/').pop() ?? '',
        description: row.description,
        headings,
        body: row.body,
      },
      // A private skill counts in its namespace's readers' statistics alone (SemanticModel.viewOf).
      row.visibility === 'public' ? null : row.owner,
    );
    hold(slot, {
      hit,
      visibility: row.visibility,
      ownerKey: row.owner.toLowerCase(),
      revision: row.revision,
      ...(keepTexts ? { text: skillEmbeddingText(row, headings) } : {}),
      refused: refuses(hit.flags),
    });
    slots.set(row.identity, slot);
    if (target.mustForget()) {
      // What was learnt from one team's skills alone must reach nobody else: forgotten at once, before any
      // request is answered, and learnt again by the sync (see SemanticModel.learningGroup).
      target.forgetLearnt();
      if (target === model) dense = null;
    }
    if (target === model) dense?.add(slot);
    if (embedder) toEmbed.add(slot);
  };

  const drop = (target: SemanticModel, identity: string) => {
    const slot = slots.get(identity);
    if (slot === undefined) return;
    target.delete(slot);
    if (target === model) dense?.delete(slot);
    hold(slot, undefined);
    slots.delete(identity);
    vectors.delete(slot);
    toEmbed.delete(slot);
  };

  /** Embeds the skills waiting for it, in the background; a failing service is retried at the next sync. */
  const embedPending = () => {
    if (!embedder || embedding || toEmbed.size === 0 || follower.closed) return;
    embedding = (async () => {
      while (toEmbed.size > 0 && !follower.closed) {
        const batch = [...toEmbed].slice(0, EMBED_BATCH * 4);
        const texts = batch.map((s) => held[s]?.text ?? '');
        const got = await embedder.embed(texts);
        batch.forEach((slot, i) => {
          toEmbed.delete(slot);
          if (held[slot]) vectors.set(slot, got[i]!);
        });
        embeddingsError = undefined;
      }
    })()
      .catch((err) => {
        embeddingsError = (err as Error).message;
        options.onError?.(err);
      })
      .finally(() => {
        embedding = null;
      });
  };

  /**
   * One batch of the build, read again after a failure: the model builds while the search index does, and
   * on a busy host a batch's answer can wait in the socket past the query timeout while the other build
   * holds the event loop; a failed first build is not retried (the change follower only catches up).
   */
  const loadBatch = async (afterId: number): Promise<SearchDocumentRow[]> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await loadSearchDocuments(db, afterId, BUILD_BATCH);
      } catch (err) {
        if (attempt >= BUILD_BATCH_ATTEMPTS || follower.closed) throw err;
        options.onError?.(err);
        await new Promise((resolve) => setTimeout(resolve, 1_000 * attempt));
      }
    }
  };

  const doBuild = async () => {
    const started = performance.now();
    const slice = new TimeSlicer(options.buildSliceMs);
    const fresh = new SemanticModel();
    // A rebuild (the change feed could not say what changed) renumbers the slots the old model's postings
    // point at: until the fresh model serves, suggestions answer 503 rather than name other skills.
    model = null;
    dense = null;
    holdNothing();
    slots = new Map();
    nextSlot = 0;
    const startMark = await currentChangeMark(db);
    let afterId = 0;
    for (;;) {
      const rows = await loadBatch(afterId);
      if (rows.length === 0) break;
      for (const row of rows) {
        if (slice.due()) await slice.pause();
        add(fresh, row);
      }
      afterId = rows[rows.length - 1]!.id;
      if (bytes() + fresh.stats().bytes > options.maxBytes) {
        throw new Error(
          `the suggestion model would exceed its memory budget (${Math.round(options.maxBytes / 2 ** 20)} MiB) at ${slots.size} skills`,
        );
      }
    }
    await fresh.mineRelated(slice);
    dense = await DenseModel.build(fresh, slice);
    model = fresh;
    mark = startMark;
    buildSeconds = (performance.now() - started) / 1000;
    builtInThread = false;
    snapshots.built();
    follower.error = undefined;
    embedPending();
    await storeSnapshot(slice);
    await doSync();
  };

  /** Stores the model as it is now (with what the engine holds per skill). */
  const storeSnapshot = (slice: TimeSlicer) => {
    const [m, d] = [model, dense];
    if (!m || !d || !mark) return Promise.resolve();
    return snapshots.store(
      mark,
      slots.size,
      async () => {
        const entries: SuggestionSnapshot<Held>['entries'] = [];
        for (const [identity, slot] of slots) entries.push([identity, slot, held[slot]!]);
        return { semantic: await m.snapshot(slice), dense: d.snapshot(), entries, nextSlot };
      },
      slice,
    );
  };

  /** Puts a stored model in place; a reason when it cannot. */
  const restoreSnapshot = async (value: SuggestionSnapshot<Held>, from: ChangeMark, slice: TimeSlicer) => {
    // Stored by a hub without an embeddings service: what to embed was not kept.
    if (embedder && value.entries.some(([, , entry]) => entry.text === undefined)) {
      return 'it was stored without the texts an embeddings service embeds';
    }
    const restored = await SemanticModel.restore(value.semantic, slice);
    const restoredDense = await DenseModel.restore(restored, value.dense, slice);
    // A budget lowered since it was stored: the build says what the budget is and refuses.
    if (bytesOf(restored, restoredDense, value.entries.length) > options.maxBytes) {
      return 'it would exceed the memory budget';
    }
    holdNothing();
    slots = new Map();
    for (const [identity, slot, entry] of value.entries) {
      hold(slot, entry);
      slots.set(identity, slot);
      if (embedder) toEmbed.add(slot);
    }
    nextSlot = value.nextSlot;
    model = restored;
    dense = restoredDense;
    mark = from;
    embedPending();
    return null;
  };

  const doSync = async () => {
    const target = model;
    if (!target || !mark) return;
    const slice = new TimeSlicer(options.buildSliceMs);
    const scan = await applySkillChanges(
      db,
      mark,
      {
        revisionOf: (identity) => {
          const slot = slots.get(identity);
          return slot === undefined ? undefined : held[slot]?.revision;
        },
        visibilityOf: (identity) => {
          const slot = slots.get(identity);
          return slot === undefined ? undefined : held[slot]?.visibility;
        },
        identities: () => slots.keys(),
        get size() {
          return slots.size;
        },
        remove: (identity) => drop(target, identity),
        patch: (row) => {
          const slot = slots.get(row.identity)!;
          const h = held[slot]!;
          h.hit = { ...h.hit, stars: row.stars, flags: row.flags.map(flagSummary) };
          h.visibility = row.visibility;
          h.refused = refuses(h.hit.flags);
          hold(slot, h);
        },
        upsert: (row) => add(target, row),
      },
      slice,
    );
    if (!scan) {
      await doBuild();
      return;
    }
    snapshots.tookChanges(scan.applied);
    const remined = target.needsRemine() || target.learntFromAnother();
    if (remined) {
      // Requests go on with the related terms and vectors of before until both are rebuilt.
      await target.mineRelated(slice);
      dense = await DenseModel.build(target, slice);
    }
    mark = scan.nextMark;
    embedPending();
    if (remined || snapshots.due) await storeSnapshot(slice);
  };

  const snapshots = new SnapshotKeeper<SuggestionSnapshot<Held>>(db, {
    name: SUGGESTION_SNAPSHOT,
    sources: SUGGESTION_SOURCES,
    enabled: options.snapshots ?? false,
    onSnapshot: options.onSnapshot,
    onError: options.onError,
    everyMs: options.snapshotEveryMs,
    sliceMs: options.buildSliceMs,
  });
  /** The first build's model built by another thread (buildElsewhere), unless a stored one can be loaded. */
  const buildInAnotherThread = async () => {
    try {
      if (!options.buildElsewhere || (await snapshots.storedUsable())) return;
      builtElsewhere = await options.buildElsewhere(closing.signal);
    } catch (err) {
      if (!closing.signal.aborted) options.onError?.(err);
    }
  };
  const follower = new ChangeFollower({
    ready: () => model !== null,
    build: async () => {
      await snapshots.buildOrRestore({ restore: restoreSnapshot, catchUp: doSync, build: doBuild });
      if (builtElsewhere !== null && snapshots.restoreSeconds !== null) {
        // Loaded from what the other thread stored: a build, for /metrics, not a restore.
        buildSeconds = builtElsewhere;
        builtInThread = true;
        snapshots.built();
      }
      builtElsewhere = null;
    },
    catchUp: doSync,
    onError: options.onError,
    startAfter: options.startAfter,
    beforeFirstBuild: options.buildElsewhere && options.snapshots ? buildInAnotherThread : undefined,
  });
  const sync = () => follower.sync();
  const build = () => follower.build();

  /** The weighted terms a need is searched with: its words, their synonyms, and their related terms. */
  const queryTerms = (m: SemanticModel, words: readonly string[]): QueryTerm[] => {
    const out = new Map<string, QueryTerm>();
    const put = (term: string, weight: number, of: string) => {
      const had = out.get(term);
      if (!had || had.weight < weight) out.set(term, { term, weight, of });
    };
    for (const w of words) put(cachedTermOf(w), 1, cachedTermOf(w));
    for (const match of findSynonyms(words)) {
      const of = cachedTermOf(words[match.start]!);
      for (const alt of match.alternatives) for (const w of alt) put(cachedTermOf(w), SYNONYM_WEIGHT, of);
    }
    // A Chinese, Japanese or Korean word's English (translations.json) is the word itself, not a synonym: full
    // weight, and a skill holding it covers the word (`coverageTerms`).
    for (const w of words) {
      const of = cachedTermOf(w);
      for (const phrase of translationsOf(w)) for (const t of phrase) put(cachedTermOf(t), 1, of);
    }
    for (const w of words) {
      const term = cachedTermOf(w);
      for (const r of m.relatedTerms(term).slice(0, RELATED_PER_WORD)) {
        put(r.term, RELATED_WEIGHT * r.npmi, term);
      }
    }
    return [...out.values()];
  };

  /**
   * How much of a need a skill covers, weighted by how telling each word is: all of it and only its name,
   * description and headings. A word no skill holds weighs as the rarest (it is what the message is about).
   * `marks`: the skill's terms as `markPresence` marks them; `need`: the need's terms as `coverageTerms`
   * resolves them once per request.
   */
  const coverage = (m: SemanticModel, marks: Uint8Array, need: CoverageTerms, view: StatisticsView) => {
    const size = m.sizeFor(view);
    const maxIdf = Math.log(1 + (size + 0.5) / 0.5);
    let total = 0;
    let all = 0;
    let topical = 0;
    const { ids, scales, creditAt, direct, idfs, creditAll, creditTopical, credited } = need;
    credited.fill(0);
    for (let i = 0; i < ids.length; i++) {
      const at = creditAt[i]!;
      if (at < 0) continue;
      const id = ids[i]!;
      const found = id < 0 || id >= marks.length ? 0 : marks[id]!;
      if (found === 0) continue;
      const scale = scales[i]!;
      const isTopical = found === 2;
      if (credited[at] === 0) {
        credited[at] = 1;
        creditAll[at] = 0;
        creditTopical[at] = 0;
      }
      creditAll[at] = Math.max(creditAll[at]!, scale * (isTopical ? 1 : BODY_CREDIT));
      if (isTopical) creditTopical[at] = Math.max(creditTopical[at]!, scale);
    }
    for (let k = 0; k < direct.length; k++) {
      const at = direct[k]!;
      const idf = idfs[k]! || maxIdf * 0.5;
      total += idf;
      if (credited[at] === 1) {
        all += idf * creditAll[at]!;
        topical += idf * creditTopical[at]!;
      }
    }
    const unit = idfUnit(size);
    return total === 0
      ? { all: 0, topical: 0, allIdf: 0, topicalIdf: 0 }
      : { all: all / total, topical: topical / total, allIdf: all * unit, topicalIdf: topical * unit };
  };

  /**
   * Whether a need word is telling in the index: some skills are about it (it is in their name, description
   * or headings), and not so many that it says nothing.
   */
  const informative = (m: SemanticModel, term: string, view: StatisticsView): boolean =>
    isTelling(m.topicalCount(term, view), m.sizeFor(view));

  /**
   * The phrase of the need's text the skill answers: its densest stretch of need words the skill holds,
   * words of its name, description or headings weighing most.
   */
  const matchedText = (
    m: SemanticModel,
    slot: number,
    need: Need,
    quote: PhraseQuoter,
    readAs: MessageNeeds['readAs'],
    view: StatisticsView,
  ): Quote =>
    quote((word) => {
      const weightOf = (term: string) => {
        const held = m.match(slot, term);
        return held ? m.idf(term, view) * (held.topical ? 1 : BODY_QUOTE_SHARE) : 0;
      };
      // A word of a message in another language read as English (foreign-terms.ts): its English's weight.
      const english = readAs.get(word);
      if (english) {
        const read = english.filter((w) => need.words.includes(w));
        return read.length > 0 ? Math.max(...read.map((w) => weightOf(cachedTermOf(w)))) : 0;
      }
      if (!need.words.includes(word)) return 0;
      let weight = weightOf(cachedTermOf(word));
      // A Chinese, Japanese or Korean word the skill holds in English (translations.json) is one it answers.
      for (const phrase of translationsOf(word))
        if (phrase.length === 1) weight = Math.max(weight, weightOf(cachedTermOf(phrase[0]!)));
      return weight;
    });

  /** The embeddings-service list of a need: the search engine's index when it answers, else the vectors held here. */
  const serviceNeighbours = async (
    vector: Float32Array,
    viewer: ReadScope,
    admit: (slot: number) => boolean,
  ): Promise<string[]> => {
    if (options.vectorSearch) {
      const found = await options.vectorSearch(vector, viewer, SEMANTIC_DEPTH).catch(() => null);
      if (found) return found;
    }
    return vectors.nearest(vector, SEMANTIC_DEPTH, admit).map((h) => held[h.slot]!.hit.identity);
  };

  const suggest = async (
    message: string,
    viewer: ReadScope,
    limit: number,
    threshold?: number,
    waiting: SuggestWaiting = {},
  ): Promise<SuggestAnswer> => {
    if (!model) {
      const { building } = follower;
      if (building) await Promise.race([building, new Promise((r) => setTimeout(r, 2_000).unref())]);
      if (!model) {
        throw follower.error
          ? new SuggestUnavailableError(follower.error)
          : new SuggestUnavailableError('the suggestion model is still building', BUILDING_RETRY_AFTER_S);
      }
    }
    if (follower.dirty) await sync();
    // What the message asks is read before its turn (about 0.3 ms; the retrieval below is 20 times that):
    // a message that asks for nothing a skill could do (small talk, no telling word: a task prior of 0,
    // which no skill's score can outweigh) is answered at once instead of waiting behind the suggestions
    // queued, and costs no retrieval. An agent's hook sends every prompt, "thanks" and "go on" too.
    const needs = extractNeeds(message);
    if (needs.words.length === 0) return { results: [], abstained: true, abstention: 'no-task', best: 0 };
    const signal = taskSignal(message, needs.text);
    // A Chinese, Japanese or Korean word is telling when its English is (translations.json): skills are written
    // in English, and no skill is about the word as written.
    // What a reader is answered counts only the skills it may read (SemanticModel.viewOf).
    const telling = (m: SemanticModel, w: string) => {
      const view = m.viewOf(viewer);
      return (
        informative(m, cachedTermOf(w), view) ||
        translationsOf(w).some((phrase) => phrase.every((t) => informative(m, cachedTermOf(t), view)))
      );
    };
    const taskOf = (m: SemanticModel): TaskEvidence => ({
      ...signal,
      informative: needs.words.filter((w) => telling(m, w)).length,
    });
    const readBy = model;
    const asked = readBy ? taskOf(readBy) : null;
    // A prior of 0 makes every score 0: the request abstains under a positive threshold, whichever
    // reranker would answer (it is chosen later).
    const abstainBelow =
      threshold ?? Math.min(SHIPPED_RERANKER.abstainBelow, options.reranker?.abstainBelow ?? 1);
    if (asked && taskPrior(asked) === 0 && abstainBelow > 0 && !options.explain) {
      return { results: [], abstained: true, abstention: 'no-task', best: 0 };
    }
    // The work below is CPU alone (up to the embeddings service's answer): it runs in its turn, so that
    // under load suggestions are answered in the order they came (see Turns).
    try {
      await turns.take(waiting);
    } catch (err) {
      if (!(err instanceof TurnRefusedError)) throw err;
      throw err.reason === 'left' ? new SuggestAbandonedError() : SuggestOverloadedError.of(err);
    }
    const m = model;
    // A rebuild that began while this request waited for its turn holds no model yet.
    if (!m) {
      throw new SuggestUnavailableError('the suggestion model is rebuilding', BUILDING_RETRY_AFTER_S);
    }
    // A model rebuilt while the request waited may read its words otherwise.
    const task = asked && m === readBy ? asked : taskOf(m);
    const view = m.viewOf(viewer);
    const readable = new Set(viewer.readableNamespaces.map((n) => n.toLowerCase()));
    const admit = (slot: number) => {
      const a = access[slot];
      if (a === PUBLIC) return true;
      return a === RESTRICTED && (viewer.isAdmin || readable.has(held[slot]!.ownerKey));
    };
    const asks: Need[] = [needs.whole, ...needs.parts];
    const termsOf = asks.map((need) => queryTerms(m, need.words));
    /** The retrieval lists fused, each labelled `need:retrieval` (explain reports every candidate's ranks). */
    const lists: (RankedList & { label: string })[] = [];
    /** Rank of each candidate in the whole request's lexical, term-model and LSA lists. */
    const wholeRanks = {
      lexical: new Map<string, number>(),
      semantic: new Map<string, number>(),
      lsa: new Map<string, number>(),
    };
    const remember = (into: Map<string, number>, keys: readonly string[]) =>
      keys.forEach((k, r) => {
        if (!into.has(k)) into.set(k, r);
      });
    const semanticTop = new Set<string>();
    /** Each candidate's best rank in the lexical lists of the message's needs apart (several needs). */
    const partLexical = new Map<string, number>();
    const lexicalTop = new Set<string>();
    const identityOf = (slot: number) => held[slot]!.hit.identity;
    // Dense vectors from the embeddings service, when it answers in time (else the model alone).
    let queryVectors: Float32Array[] | null = null;
    if (embedder && vectors.size > 0) {
      try {
        queryVectors = await embedder.embed(
          asks.map((a) => a.text),
          { timeoutMs: options.queryEmbeddingTimeoutMs ?? 1_000, attempts: 1 },
        );
        embeddingsError = undefined;
      } catch (err) {
        embeddingsError = (err as Error).message;
      }
    }
    const reranker =
      options.reranker && (queryVectors || !weighsService(options.reranker))
        ? options.reranker
        : SHIPPED_RERANKER;
    const d = dense;
    const lsaVectors = asks.map((_, i) => (d ? d.queryVector(termsOf[i]!) : null));
    // The term model and the LSA model search the whole request only: without a need's own lists of theirs
    // no cross-validated figure moved by more than 0.005 (the per-need evidence, coverage and LSA cosine of
    // each need, is computed for every candidate without a search), and those lists were two thirds of the
    // two models' time at 54,061 skills.
    const semantic = m
      .search(termsOf[0]!, SEMANTIC_DEPTH, admit, options.readCap, view)
      .map((h) => identityOf(h.slot));
    lists.push({ keys: semantic, weight: 1, label: '0:semantic' });
    remember(wholeRanks.semantic, semantic);
    for (const k of semantic.slice(0, 10)) semanticTop.add(k);
    const lsa = lsaVectors[0];
    if (lsa && d) {
      const near = d.nearest(lsa, SEMANTIC_DEPTH, admit).map((h) => identityOf(h.slot));
      lists.push({ keys: near, weight: 1, label: '0:lsa' });
      remember(wholeRanks.lsa, near);
    }
    // The lexical (and embeddings-service) lists: the whole request's, and each need's own.
    await Promise.all(
      asks.map(async (need, i) => {
        const weight = i === 0 ? 1 : 0.5;
        const service = queryVectors?.[i];
        if (service) {
          const near = await serviceNeighbours(service, viewer, admit);
          lists.push({ keys: near, weight, label: `${i}:service` });
          if (i === 0) for (const k of near.slice(0, 10)) semanticTop.add(k);
        }
        const page = await search.search(need.words.join(' '), {}, viewer, LEXICAL_DEPTH, undefined, {
          noCursor: true,
          draw:
            i === 0
              ? (options.lexicalDraw ?? SUGGEST_DRAW)
              : (options.partDraw ?? options.lexicalDraw ?? PART_DRAW),
        });
        const lexical = page.hits.filter((h) => h.kind === 'skill').map((h) => h.identity);
        lists.push({ keys: lexical, weight, label: `${i}:lexical` });
        if (i === 0) remember(wholeRanks.lexical, lexical);
        else
          lexical.forEach((k, r) => {
            if (r < (partLexical.get(k) ?? Number.POSITIVE_INFINITY)) partLexical.set(k, r);
          });
        if (i === 0) for (const k of lexical.slice(0, 10)) lexicalTop.add(k);
      }),
    );
    const messageTerms = new Set(termsOf[0]!.filter((t) => t.term === t.of).map((t) => t.term));
    const fused = [...reciprocalRankFusion(lists)]
      // The lexical lists come from the search engine: the same admission as the models' lists.
      .filter(([identity]) => {
        const slot = slots.get(identity);
        return slot !== undefined && admit(slot);
      })
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, RERANK_DEPTH);
    const best = fused[0]?.[1] ?? 1;
    // Term ids and idfs read once per request, not once per candidate (coverage scores 40 candidates
    // against each need).
    const coverageOf = termsOf.map((terms) => coverageTerms(m, terms, view));
    /**
     * A candidate's similarity to the whole request (the first vector) and its best to one need (the
     * whole request's for a message of one need); a need without a vector counts for nothing.
     */
    const wholeAndBestNeed = <V>(
      vectorsOfAsks: readonly (V | null | undefined)[],
      similarity: (v: V) => number,
    ): [number, number] => {
      const first = vectorsOfAsks[0];
      const whole = first ? similarity(first) : 0;
      if (needs.parts.length === 0) return [whole, whole];
      let best = 0;
      for (let i = 1; i <= needs.parts.length; i++) {
        const v = vectorsOfAsks[i];
        if (v) best = Math.max(best, similarity(v));
      }
      return [whole, best];
    };
    const scored = fused.map(([identity, rrf]) => {
      const slot = slots.get(identity)!;
      const marks = m.markPresence(slot);
      const whole = coverage(m, marks, coverageOf[0]!, view);
      const parts = needs.parts.map((_, i) => coverage(m, marks, coverageOf[i + 1]!, view).all);
      m.unmarkPresence(slot);
      const [dense, partDense] = d ? wholeAndBestNeed(lsaVectors, (v) => d.cosine(slot, v)) : [0, 0];
      const [service, partService] = queryVectors
        ? wholeAndBestNeed(queryVectors, (v) => vectors.cosine(slot, v))
        : [0, 0];
      const evidence: Evidence = {
        coverage: whole.all,
        topical: whole.topical,
        topicalIdf: whole.topicalIdf,
        allIdf: whole.allIdf,
        fused: rrf / best,
        dense,
        ...m.reverseCoverage(slot, messageTerms, view),
        lexicalRank: reciprocal(wholeRanks.lexical.get(identity)),
        semanticRank: reciprocal(wholeRanks.semantic.get(identity)),
        lsaRank: reciprocal(wholeRanks.lsa.get(identity)),
        stars: Math.log1p(held[slot]!.hit.stars),
        agreement: semanticTop.has(identity) && lexicalTop.has(identity),
        partLexicalRank: reciprocal(
          (needs.parts.length > 0 ? partLexical : wholeRanks.lexical).get(identity),
        ),
        partDense,
        partCoverage: parts.length > 0 ? Math.max(...parts) : whole.all,
        descriptionLead: 0,
        service,
        partService,
      };
      return { identity, slot, parts, evidence };
    });
    // Each candidate's description match against the best one among the candidates (a second pass: the
    // best is known once every candidate is scored).
    const leading = Math.max(0, ...scored.map((c) => c.evidence.descriptionCovered));
    const valued = scored.map((c) => {
      c.evidence.descriptionLead = leading > 0 ? c.evidence.descriptionCovered / leading : 0;
      return { ...c, rank: rerankValue(c.evidence, reranker) };
    });
    // The message names its best candidate when it holds that skill's whole name (abstain.ts taskPrior).
    let first: (typeof valued)[number] | undefined;
    for (const c of valued) if (!first || c.rank > first.rank) first = c;
    const prior = taskPrior(task, first !== undefined && first.evidence.nameCovered >= NAMED_WHOLE);
    // Ordered by the reranker; the score is its calibration (monotonic, so the order is the same).
    const ranked = valued.map(({ identity, slot, parts, evidence, rank }) => ({
      key: identity,
      slot,
      score: calibrated(rank, reranker) * prior,
      parts,
      rank,
      evidence,
    }));
    // Each skill once, then each need covered. A skill keeps the place, score and need coverage of its
    // best-ranked copy (what its copies share, name and description, is what a suggestion shows) and is shown
    // as the copy shownCopy picks (the identity an agent reads, and the words of the message it quotes).
    const hitOf = (c: (typeof ranked)[number]) => held[c.slot]!.hit;
    const distinct = copyGroups([...ranked].sort(byRank), hitOf).map((copies) => {
      const best = copies[0]!;
      const shown = shownCopy(copies, hitOf);
      return shown === best ? best : { ...best, key: shown.key, slot: shown.slot };
    });
    const ordered = diversify(distinct, needs.parts.length, COVERS);
    const bestScore = Math.max(0, ...ordered.map((c) => c.score));
    // Every reranked candidate, copies too: bench/suggest/fit-rerank.py groups copies as this does.
    const explained = options.explain
      ? diversify(ranked, needs.parts.length, COVERS).map((c) => ({
          identity: c.key,
          score: c.score,
          evidence: c.evidence,
          parts: c.parts,
          ranks: Object.fromEntries(lists.map((l) => [l.label, l.keys.indexOf(c.key)])),
        }))
      : undefined;
    const explain = explained ? { explained, task } : {};
    if (bestScore < (threshold ?? reranker.abstainBelow)) {
      return { results: [], abstained: true, abstention: 'no-fit', best: bestScore, ...explain };
    }
    // Each need's text is split into words once, for every result that quotes it.
    const quoters = new Map<Need, PhraseQuoter>();
    const quoterOf = (need: Need) => {
      let quote = quoters.get(need);
      if (!quote) {
        quote = phraseQuoter(need.text, { message, at: need.at });
        quoters.set(need, quote);
      }
      return quote;
    };
    // What a result shows: its chance given the best candidate beside it (abstain.ts SHOWN); the decisions
    // (the threshold, the result floor) stay on the Platt score they were fitted on.
    const bestValue = Math.max(...ranked.map((c) => c.rank));
    const results = ordered
      .filter((c) => c.score >= RESULT_FLOOR)
      .slice(0, limit)
      .map((c) => {
        // The part of the message it answers: the need it covers best, else the whole request.
        // A short clause stands as a need only because it opened the message ("Two things today."): a skill
        // holding its one word answers it in full, and says nothing of why it was suggested.
        let need = needs.whole;
        let bestPart = COVERS;
        c.parts.forEach((p, i) => {
          if (p > bestPart && needs.parts[i]!.words.length >= MIN_PART_WORDS) {
            bestPart = p;
            need = needs.parts[i]!;
          }
        });
        let matched = matchedText(m, c.slot, need, quoterOf(need), needs.readAs, view);
        if (need !== needs.whole) {
          // The need was chosen by the share of it the skill covers, which a short clause gets from one
          // word ("Some are scanned images, not text. Folder" quoted "Folder" for an invoice skill); the
          // whole request's densest phrase wins when it holds over QUOTE_WHOLE_OVER times the evidence.
          const whole = matchedText(m, c.slot, needs.whole, quoterOf(needs.whole), needs.readAs, view);
          if (whole.weight > QUOTE_WHOLE_OVER * matched.weight) matched = whole;
        }
        return {
          hit: held[c.slot]!.hit,
          score: Math.round(shownScore(c.rank, bestValue, reranker) * prior * 1000) / 1000,
          matched: matched.phrase,
        };
      });
    return { results, abstained: false, best: bestScore, ...explain };
  };

  return {
    suggest,
    refusal(deadline) {
      const refused = turns.refusal(deadline);
      return refused && SuggestOverloadedError.of(refused);
    },
    build,
    sync,
    noteLocalWrite() {
      follower.dirty = true;
    },
    start(watchChanges) {
      follower.start(watchChanges);
    },
    firstBuild: () => follower.firstBuild,
    status() {
      const s = model?.stats();
      return {
        ready: model !== null,
        documents: s?.documents ?? 0,
        vocabulary: s?.vocabulary ?? 0,
        postings: s?.postings ?? 0,
        relatedPairs: s?.relatedPairs ?? 0,
        bytes: model ? bytes() : 0,
        vectors: vectors.size,
        denseBytes: dense?.bytes() ?? 0,
        buildSeconds,
        restoreSeconds: snapshots.restoreSeconds,
        builtInThread,
        queued: turns.queued,
        turnMs: turns.turnMs,
        ...(embeddingsError ? { embeddingsError } : {}),
        ...(follower.error ? { error: follower.error } : {}),
      };
    },
    async close() {
      closing.abort();
      await follower.close();
      await embedding?.catch(() => {});
    },
  };
}
