import { TimeSlicer } from '../runtime/time-slice.js';
import {
  hiddenShare,
  PUBLIC_GROUP,
  PUBLIC_VIEW,
  type StatisticsView,
  statisticsViewOf,
} from '../search/memory/group-statistics.js';
import { leadingWords } from '../search/relevance/analyze.js';
import { grown } from './grow.js';
import { contentWords } from './needs.js';
import { cachedTermOf, contentTermOf } from './term-cache.js';
import { type SlotHit, topScoredSlots } from './top-slots.js';

/** What the model indexes of a skill. */
export interface ModelDocument {
  name: string;
  /** The folder name when it differs from the name (often the better-known one). */
  folder: string;
  description: string;
  headings: string;
  body: string;
}

/** A weighted query term: a word of the need, or a term related to one (`of` names the need word's term). */
export interface QueryTerm {
  term: string;
  weight: number;
  /** The need term this one stands for (itself for a word of the message). */
  of: string;
}

// How much each field says about what a skill is for (per occurrence, body words counted up to a bound).
const NAME_WEIGHT = 3;
const DESCRIPTION_WEIGHT = 2;
const HEADING_WEIGHT = 1;
const BODY_WEIGHT = 0.4;
/** Body words read per skill: the opening of a body says what it does; the rest is how. */
const BODY_WORDS = 600;
/** Distinct terms kept per skill (the heaviest): bounds memory per skill. */
const MAX_DOC_TERMS = 160;
/** Weights are stored in tenths, 7 bits; the top bit marks a term of the name, description or headings. */
const WEIGHT_STEP = 0.1;
const TOPICAL_BIT = 0x80;
// Related terms: mined from the terms of names, descriptions and headings (what a skill is about).
const RELATED_MIN_DF = 3;
const RELATED_MAX_DF_SHARE = 0.04;
const RELATED_SAMPLE = 400;
const RELATED_PER_TERM = 6;
const RELATED_MIN_COUNT = 2;
const RELATED_MIN_NPMI = 0.3;
/** Saturation of a term's weight in a skill (BM25's k1, over field-weighted counts). */
const SATURATION = 1.5;

/**
 * Postings read per term by a search at most (about: see `Postings.head`). A word most skills hold ("use",
 * "file") costs a pass over most of the index and says little about any one skill; past this many
 * holders a search reads only the skills that weigh the word most (a name, a description, many mentions).
 * Lists this short or shorter are read whole, so an index of up to this many skills answers exactly as
 * with no cap.
 */
export const READ_CAP = 2_000;
/** Terms the scratch of `SemanticModel.set` numbers at most (about 5 MiB with their weights). */
const SCRATCH_TERMS = 65_536;
/** Distinct weight bytes (7 bits: see WEIGHT_STEP). */
const WEIGHT_LEVELS = 128;

/** A growable list of packed postings (slot << 8 | weight byte). */
class Postings {
  data = new Uint32Array(4);
  length = 0;
  /**
   * For a list with more live holders than a read cap: how many live postings have each weight byte
   * (kept from the first search that needed it, on every add and removal after), and the head read in
   * the list's place: every posting of weight `headFloor` or more, the lowest floor that keeps the head
   * within the cap (or the heaviest weight alone, when it holds more). The floor is a function of the
   * live postings, so the answer does not depend on the order skills came in. The head covers the list
   * up to `headUpTo`; postings pushed since are added at the next search.
   */
  weightCounts: Int32Array | null = null;
  head: Postings | null = null;
  headFloor = 0;
  headUpTo = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Uint32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
}

/** The lowest weight byte whose postings and heavier ones number at most `cap` (the heaviest weight when it alone holds more). */
function headFloorOf(counts: Int32Array, cap: number): number {
  let held = 0;
  let floor = WEIGHT_LEVELS;
  for (let w = WEIGHT_LEVELS - 1; w >= 1; w--) {
    const c = counts[w]!;
    if (c === 0) continue;
    if (held + c > cap && floor < WEIGHT_LEVELS) break;
    held += c;
    floor = w;
  }
  return floor;
}

interface Doc {
  /** Term ids, ascending. */
  terms: Uint32Array;
  /** Per term: weight in tenths (low 7 bits) and TOPICAL_BIT. */
  weights: Uint8Array;
  /** Sum of the term weights (length normalisation). */
  length: number;
  /** Hash of name + description (copies of one skill count once when mining related terms). */
  key: string;
  /**
   * The distinct terms of the name, then of the description, in the order they first occur (see
   * `reverseCoverage`): a term id, or -1 - k for `aboutExtra[k]`, a term the vocabulary did not hold
   * when the skill was added (it may later). Computed once here: re-tokenising and stemming the name and
   * description of every candidate of every request was a good share of a suggestion's time.
   */
  about: Int32Array;
  /** How many of `about` are the name's. */
  aboutName: number;
  aboutExtra: string[] | undefined;
  /** PUBLIC_GROUP, or the private group whose readers alone count the skill in their statistics. */
  group: number;
}

/** What one private group's skills (or every private group's) add to the model's statistics. */
interface GroupCounts {
  live: number;
  /** Summed lengths (length normalisation's average). */
  length: number;
  /** Per term id, skills holding it, and holding it in their name, description or headings. */
  df: Map<number, number>;
  topical: Map<number, number>;
}

/** What `learntFrom` says once the related terms were forgotten: nothing is learnt until mined again. */
const LEARNT_NOTHING = -1;

function newGroupCounts(): GroupCounts {
  return { live: 0, length: 0, df: new Map(), topical: new Map() };
}

/** The index of term `id` in a skill's ascending term ids, or -1 (what `match` asks). */
function termIndex(terms: Uint32Array, id: number): number {
  let lo = 0;
  let hi = terms.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = terms[mid]!;
    if (v === id) return mid;
    if (v < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** A skill the model ranks, with its score. */
export type ModelHit = SlotHit;

/**
 * What a snapshot keeps of a SemanticModel (snapshot.ts stores it): every held skill's terms, weights and
 * name and description terms, the vocabulary in id order, and the mined related terms, in flat arrays. The
 * postings, document frequencies and lengths are derived from the skills' terms on restore, in
 * milliseconds per thousand skills; reading and analysing the skills' text again is what a build spends
 * its time on.
 */
export interface SemanticModelSnapshot {
  termNames: string[];
  /** Slots ever used (the next skill's slot is at least this). */
  slotCount: number;
  /** The held skills' slots, ascending; the arrays below follow this order. */
  docSlots: Int32Array;
  termStart: Int32Array;
  terms: Uint32Array;
  weights: Uint8Array;
  aboutStart: Int32Array;
  about: Int32Array;
  aboutName: Int32Array;
  keys: string[];
  aboutExtra: (string[] | null)[];
  /** Kept as summed, not summed again: a float sum in another order can differ in the last bit. */
  totalLength: number;
  changesSinceMine: number;
  relatedPairs: number;
  relatedOf: Uint32Array;
  relatedStart: Int32Array;
  relatedIds: Uint32Array;
  relatedNpmi: Float32Array;
  /** The private groups' owners (lowercase), group 1 first, and each held skill's group (docSlots' order). */
  groupOwners: string[];
  docGroups: Int32Array;
  /** The group the related terms were mined from (see SemanticModel.learningGroup). */
  learntFrom: number;
}

/**
 * The default semantic model, built from the hub's own index with nothing to download: a field-weighted
 * term index of every skill (name, description, headings and the opening of the body) plus related terms
 * mined from co-occurrence (normalised PMI) in names, descriptions and headings, which let a message
 * reach a skill that uses other words. Documents are added and removed as the index changes; the related
 * terms are re-mined when the corpus has drifted (see `needsRemine`).
 */
export class SemanticModel {
  private readonly vocabulary = new Map<string, number>();
  private readonly termNames: string[] = [];
  private df = new Int32Array(1024);
  /** Skills holding the term in their name, description or headings (what they are about). */
  private topicalDf = new Int32Array(1024);
  private readonly postings: Postings[] = [];
  private readonly docs: (Doc | undefined)[] = [];
  /** Per slot, 1 for a private skill (its postings are read whatever a list's read cap: see headOf). */
  private privateSlots = new Uint8Array(1024);
  /** Scratch of `markPresence`, by term id. */
  private presenceMarks = new Uint8Array(0);
  private live = 0;
  private totalLength = 0;
  private deadPostings = 0;
  private postingCount = 0;
  private related = new Map<number, { ids: Uint32Array; npmi: Float32Array }>();
  private relatedPairs = 0;
  private changesSinceMine = 0;
  private scores = new Float32Array(1024);
  /**
   * Per slot, its length (sum of term weights), -1 when no skill holds it: search reads it for every
   * posting, and following the document object there cost a cache miss per posting.
   */
  private lengths = new Float64Array(1024).fill(-1);
  /**
   * Per slot, the length normalisation search divides by (-1 for no skill), for the average length
   * `normsAverage`: computed again only when the average moved (a skill was added or removed), instead of
   * once per posting read. Float32, like the scores: the two arrays a search reads at random, one entry per
   * posting, then fit the processor's cache together at 54,000 skills (the term model's time fell 4.69 ->
   * 3.82 ms a request), and every score stays what it was (the explain output is byte-identical).
   */
  private norms = new Float32Array(0);
  private normsAverage = Number.NaN;
  /** Scratch of search: the slots scored so far, and their scores. */
  private touched = new Uint32Array(1024);
  private touchedScores = new Float64Array(0);
  /**
   * Scratch of `set`: a number for every term met so far (`scratchTerms` holds them), and per number the
   * skill that last met it (`scratchStamp`, skills counted by `scratchSerial`), its summed weight and
   * topicality in that skill; `scratchMet` lists the current skill's terms in the order met.
   */
  private readonly scratchIndex = new Map<string, number>();
  private readonly scratchTerms: string[] = [];
  private scratchStamp = new Uint32Array(1024);
  private scratchSerial = 0;
  private readonly scratchMet: number[] = [];
  private scratchWeights = new Float64Array(1024);
  private scratchTopical = new Uint8Array(1024);

  /**
   * `scratchTermsHeld`: the terms the scratch of `set` numbers at most; past it the numbering starts over,
   * which bounds its memory (a skill's terms are numbered afresh as met, so no answer changes).
   */
  constructor(private readonly scratchTermsHeld = SCRATCH_TERMS) {}

  /** Skills held. */
  get size(): number {
    return this.live;
  }

  /**
   * Per owner (lowercase) of private skills, its group: a reader's statistics (idf, what words skills are
   * about, the length average) count the public skills and the groups it may read, so a private skill moves
   * nothing an outsider is answered (see GroupStatistics, the search index's counterpart). The related terms
   * and the LSA model are built from public skills alone (private ones are folded into the latter).
   */
  private readonly groupIds = new Map<string, number>();
  private readonly groupCounts = new Map<number, GroupCounts>();
  private readonly everyGroup = newGroupCounts();

  /** The group the related terms (and the LSA model built with them) were learnt from: see learningGroup. */
  private learntFrom = PUBLIC_GROUP;

  /**
   * The group whose skills what is learnt from the index as a whole (the related terms, the LSA model) is
   * learnt from: the public skills; in a hub of no public skill and one team's private skills alone, that
   * team's, which no outsider reads (an outsider there reads no skill at all).
   */
  learningGroup(): number {
    if (this.live > this.everyGroup.live) return PUBLIC_GROUP;
    let only = PUBLIC_GROUP;
    for (const [group, counts] of this.groupCounts) {
      if (counts.live === 0) continue;
      if (only !== PUBLIC_GROUP) return PUBLIC_GROUP;
      only = group;
    }
    return only;
  }

  /** Whether what was learnt was learnt from other skills than learningGroup names now: learn it again. */
  learntFromAnother(): boolean {
    return this.learntFrom !== this.learningGroup();
  }

  /**
   * Whether what was learnt is a team's and the hub now holds skills others read (a public skill or another
   * team's): it must be forgotten (`forgetLearnt`) before anyone else is answered.
   */
  mustForget(): boolean {
    return this.learntFrom > PUBLIC_GROUP && this.learntFrom !== this.learningGroup();
  }

  /** Forgets the related terms until they are mined again (see mustForget). */
  forgetLearnt(): void {
    this.related = new Map();
    this.relatedPairs = 0;
    this.learntFrom = LEARNT_NOTHING;
  }

  /** The statistics view of a reader (see StatisticsView). */
  viewOf(scope: { isAdmin: boolean; readableNamespaces: readonly string[] }): StatisticsView {
    return this.groupIds.size === 0 ? PUBLIC_VIEW : statisticsViewOf(scope, this.groupIds);
  }

  /** The statistics group of a skill owned by `owner`: PUBLIC_GROUP for a public one. */
  private groupOf(owner: string | null): number {
    if (owner === null) return PUBLIC_GROUP;
    const key = owner.toLowerCase();
    let group = this.groupIds.get(key);
    if (group === undefined) {
      group = this.groupIds.size + 1;
      this.groupIds.set(key, group);
    }
    return group;
  }

  /** Adds (`sign` 1) or takes away (-1) a private skill's share of its group's statistics. */
  private countPrivate(doc: Doc, sign: 1 | -1): void {
    if (doc.group === PUBLIC_GROUP) return;
    let counts = this.groupCounts.get(doc.group);
    if (!counts) {
      counts = newGroupCounts();
      this.groupCounts.set(doc.group, counts);
    }
    for (const c of [counts, this.everyGroup]) {
      c.live += sign;
      c.length += sign * doc.length;
      doc.terms.forEach((id, k) => {
        c.df.set(id, (c.df.get(id) ?? 0) + sign);
        if (doc.weights[k]! & TOPICAL_BIT) c.topical.set(id, (c.topical.get(id) ?? 0) + sign);
      });
    }
  }

  /** What the view does not see of a count kept per group. */
  private hidden(view: StatisticsView, count: (c: GroupCounts) => number): number {
    return this.groupIds.size === 0 ? 0 : hiddenShare(view, this.groupCounts, this.everyGroup, count);
  }

  /** Skills holding term `id` that the view sees. */
  private seenDf(id: number, view: StatisticsView): number {
    return this.df[id]! - this.hidden(view, (c) => c.df.get(id) ?? 0);
  }

  /** Skills the view sees. */
  sizeFor(view: StatisticsView): number {
    return this.live - this.hidden(view, (c) => c.live);
  }

  /**
   * Adds (or replaces) the skill in `slot`. `owner`: null for a public skill, else the namespace whose
   * readers alone count it in their statistics.
   */
  set(slot: number, doc: ModelDocument, owner: string | null = null): void {
    this.delete(slot);
    const group = this.groupOf(owner);
    // The skill's distinct terms in the order first met, with their summed field weights and whether one
    // of them was topical, in scratch arrays reused from skill to skill; before, a Map emptied and grown
    // again per skill and an object per term: adding 54,061 skills took 27.2 s, now 21.9 s (means of six
    // runs, alternating with the code before).
    const index = this.scratchIndex;
    if (this.scratchTerms.length > this.scratchTermsHeld) {
      // Stamps of the old numbering are of earlier skills, so none reads as this skill's.
      index.clear();
      this.scratchTerms.length = 0;
    }
    const serial = ++this.scratchSerial;
    const met = this.scratchMet;
    met.length = 0;
    const add = (text: string, weight: number, topical: boolean, limit = Number.POSITIVE_INFINITY) => {
      for (const word of leadingWords(text, limit)) {
        const term = word.length > 40 ? null : contentTermOf(word);
        if (term === null) continue;
        let at = index.get(term);
        if (at === undefined) {
          at = this.scratchTerms.length;
          index.set(term, at);
          this.scratchTerms.push(term);
          if (at >= this.scratchStamp.length) {
            this.scratchStamp = grown(this.scratchStamp, at + 1);
            this.scratchWeights = grown(this.scratchWeights, at + 1);
            this.scratchTopical = grown(this.scratchTopical, at + 1);
          }
        }
        if (this.scratchStamp[at] === serial) {
          this.scratchWeights[at]! += weight;
          if (topical) this.scratchTopical[at] = 1;
          continue;
        }
        this.scratchStamp[at] = serial;
        met.push(at);
        this.scratchWeights[at] = weight;
        this.scratchTopical[at] = topical ? 1 : 0;
      }
    };
    add(`${doc.name} ${doc.folder}`.replace(/[-_]/g, ' '), NAME_WEIGHT, true);
    add(doc.description, DESCRIPTION_WEIGHT, true);
    add(doc.headings, HEADING_WEIGHT, true, 200);
    add(doc.body, BODY_WEIGHT, false, BODY_WORDS);
    const summed = this.scratchWeights;
    // The heaviest terms, ties in the order met (the sort is stable).
    const kept = met.sort((a, b) => summed[b]! - summed[a]!).slice(0, MAX_DOC_TERMS);
    const ids = kept.map((at) => this.termId(this.scratchTerms[at]!));
    const order = ids.map((_, i) => i).sort((a, b) => ids[a]! - ids[b]!);
    const terms = new Uint32Array(order.length);
    const bytes = new Uint8Array(order.length);
    let length = 0;
    order.forEach((i, k) => {
      const w = summed[kept[i]!]!;
      const topical = this.scratchTopical[kept[i]!] === 1;
      const q = Math.max(1, Math.min(0x7f, Math.round(w / WEIGHT_STEP)));
      terms[k] = ids[i]!;
      bytes[k] = q | (topical ? TOPICAL_BIT : 0);
      length += q * WEIGHT_STEP;
      this.df[ids[i]!]!++;
      if (topical) this.topicalDf[ids[i]!]!++;
      const list = this.postings[ids[i]!]!;
      list.push((slot << 8) | bytes[k]!);
      // A read cap's head is chosen among public skills (private ones are always read: see headOf).
      if (list.weightCounts && group === PUBLIC_GROUP) list.weightCounts[q]!++;
      this.postingCount++;
    });
    const nameAbout = this.aboutTerms(doc.name.replace(/[-_]/g, ' '));
    const descriptionAbout = this.aboutTerms(doc.description);
    const extra: string[] = [];
    const about = Int32Array.from([...nameAbout, ...descriptionAbout], (term) => {
      const id = this.vocabulary.get(term);
      if (id !== undefined) return id;
      extra.push(term);
      return -extra.length;
    });
    this.docs[slot] = {
      terms,
      weights: bytes,
      length,
      key: `${doc.name}\u0000${doc.description}`,
      about,
      aboutName: nameAbout.length,
      aboutExtra: extra.length > 0 ? extra : undefined,
      group,
    };
    this.countPrivate(this.docs[slot]!, 1);
    this.live++;
    this.totalLength += length;
    // Only what it learns from counts towards learning again: when the related terms are mined again must
    // not tell an outsider that private skills came or went.
    if (group === this.learntFrom) this.changesSinceMine++;
    if (slot >= this.scores.length) {
      const size = Math.max(slot + 1, this.scores.length * 2);
      const next = new Float32Array(size);
      next.set(this.scores);
      this.scores = next;
      const lengths = new Float64Array(size).fill(-1);
      lengths.set(this.lengths);
      this.lengths = lengths;
    }
    this.lengths[slot] = length;
    this.privateSlots = grown(this.privateSlots, slot + 1);
    this.privateSlots[slot] = group === PUBLIC_GROUP ? 0 : 1;
    this.normsAverage = Number.NaN;
  }

  /** Removes the skill in `slot` (its postings are dropped at the next compaction). */
  delete(slot: number): void {
    const doc = this.docs[slot];
    if (!doc) return;
    doc.terms.forEach((id, k) => {
      this.df[id]!--;
      if (doc.weights[k]! & TOPICAL_BIT) this.topicalDf[id]!--;
      const counts = this.postings[id]!.weightCounts;
      if (counts && doc.group === PUBLIC_GROUP) counts[doc.weights[k]! & 0x7f]!--;
    });
    this.countPrivate(doc, -1);
    this.docs[slot] = undefined;
    this.lengths[slot] = -1;
    this.normsAverage = Number.NaN;
    this.live--;
    this.totalLength -= doc.length;
    this.deadPostings += doc.terms.length;
    if (doc.group === this.learntFrom) this.changesSinceMine++;
    if (this.deadPostings > 0.25 * this.postingCount) this.compact();
  }

  private termId(term: string): number {
    let id = this.vocabulary.get(term);
    if (id === undefined) {
      id = this.termNames.length;
      this.vocabulary.set(term, id);
      this.termNames.push(term);
      this.postings.push(new Postings());
      if (id >= this.df.length) {
        const next = new Int32Array(this.df.length * 2);
        next.set(this.df);
        this.df = next;
        const nextTopical = new Int32Array(this.topicalDf.length * 2);
        nextTopical.set(this.topicalDf);
        this.topicalDf = nextTopical;
      }
    }
    return id;
  }

  /** Drops the postings of removed skills (slots are never reused, so a dead slot's postings are all stale). */
  private compact(): void {
    for (const list of this.postings) {
      list.length = 0;
      list.head = null;
    }
    this.postingCount = 0;
    this.docs.forEach((doc, slot) => {
      if (!doc) return;
      doc.terms.forEach((id, k) => {
        this.postings[id]!.push((slot << 8) | doc.weights[k]!);
        this.postingCount++;
      });
    });
    this.deadPostings = 0;
  }

  /** The distinct content terms of a text, in the order they first occur. */
  private aboutTerms(text: string): string[] {
    return [...new Set(contentWords(text).map(cachedTermOf))];
  }

  /**
   * The other direction of coverage: how much of what a skill says it is (its name, its description) the
   * message holds, idf-weighted (`words`: the message's terms). A short skill wholly named by the message
   * is a strong answer.
   */
  reverseCoverage(
    slot: number,
    words: ReadonlySet<string>,
    view: StatisticsView = PUBLIC_VIEW,
  ): { nameCovered: number; descriptionCovered: number } {
    const doc = this.docs[slot];
    if (!doc) return { nameCovered: 0, descriptionCovered: 0 };
    const live = this.sizeFor(view);
    const share = (from: number, to: number) => {
      let total = 0;
      let held = 0;
      for (let k = from; k < to; k++) {
        const ref = doc.about[k]!;
        const id = ref >= 0 ? ref : this.vocabulary.get(doc.aboutExtra![-1 - ref]!);
        const df = id === undefined ? 0 : this.seenDf(id, view);
        if (df <= 0) continue;
        const idf = Math.log(1 + (live - df + 0.5) / (df + 0.5));
        total += idf;
        if (words.has(ref >= 0 ? this.termNames[ref]! : doc.aboutExtra![-1 - ref]!)) held += idf;
      }
      return total === 0 ? 0 : held / total;
    };
    return {
      nameCovered: share(0, doc.aboutName),
      descriptionCovered: share(doc.aboutName, doc.about.length),
    };
  }

  /** Inverse document frequency of a term among the skills the view sees (0 for a term none holds). */
  idf(term: string, view: StatisticsView = PUBLIC_VIEW): number {
    const id = this.vocabulary.get(term);
    const df = id === undefined ? 0 : this.seenDf(id, view);
    if (df <= 0) return 0;
    const live = this.sizeFor(view);
    return Math.log(1 + (live - df + 0.5) / (df + 0.5));
  }

  /** How many skills the view sees hold the term in their name, description or headings. */
  topicalCount(term: string, view: StatisticsView = PUBLIC_VIEW): number {
    const id = this.vocabulary.get(term);
    return id === undefined ? 0 : this.topicalDf[id]! - this.hidden(view, (c) => c.topical.get(id) ?? 0);
  }

  /** Terms related to `term` (mined co-occurrence), strongest first, with their normalised PMI. */
  relatedTerms(term: string): { term: string; npmi: number }[] {
    const id = this.vocabulary.get(term);
    const held = id === undefined ? undefined : this.related.get(id);
    if (!held) return [];
    return [...held.ids].map((r, i) => ({ term: this.termNames[r]!, npmi: held.npmi[i]! }));
  }

  /** Whether enough of the skills it learns from changed since the related terms were mined to mine them again. */
  needsRemine(): boolean {
    const learning =
      this.learntFrom === PUBLIC_GROUP ? this.sizeFor(PUBLIC_VIEW) : this.sizeFor([this.learntFrom]);
    return this.changesSinceMine > Math.max(50, 0.1 * learning);
  }

  /**
   * Mines related terms: for each term held by a few skills (not rare noise, not a word every skill has),
   * in any field, the topical terms that co-occur with it far more often than chance (normalised PMI).
   * Seconds of work at 57,000 skills, in `slice`s; searches meanwhile read the terms mined before.
   */
  async mineRelated(slice = new TimeSlicer()): Promise<void> {
    // Skills per term: `topicalHolders` counts where the term says what the skill is about, `holders` (from
    // `start[id]`, ascending) adds bodies. A term is mined over every skill that holds it (a word users write
    // may live only in bodies: "hmac", "flaky"), and related to the topical terms of those skills (the words
    // skills are named and described with), so a message in the user's words reaches the skill's words.
    // Flat arrays, the terms taken in the order first met: a Map of lists per term, whose insertion order
    // the mining followed (ties in NPMI keep it), was 8.6 million pushes at 54,061 skills.
    const vocabulary = this.termNames.length;
    const learning = this.learningGroup();
    const topicalHolders = new Int32Array(vocabulary);
    const start = new Int32Array(vocabulary + 1);
    const firstMet: number[] = [];
    const distinctSlots: number[] = [];
    const seen = new Set<string>();
    for (let slot = 0; slot < this.docs.length; slot++) {
      if (slice.due()) await slice.pause();
      const doc = this.docs[slot];
      // Mined from public skills alone (a lone team's in a hub of its skills alone): an outsider's message
      // reads these terms.
      if (!doc || doc.group !== learning || seen.has(doc.key)) continue;
      seen.add(doc.key);
      distinctSlots.push(slot);
      const terms = doc.terms;
      for (let k = 0; k < terms.length; k++) {
        const id = terms[k]!;
        if (start[id + 1]!++ === 0) firstMet.push(id);
        if (doc.weights[k]! & TOPICAL_BIT) topicalHolders[id]!++;
      }
    }
    for (let id = 0; id < vocabulary; id++) start[id + 1]! += start[id]!;
    const holders = new Int32Array(start[vocabulary]!);
    const filled = start.slice(0, vocabulary);
    for (const slot of distinctSlots) {
      if (slice.due()) await slice.pause();
      const terms = this.docs[slot]!.terms;
      for (let k = 0; k < terms.length; k++) holders[filled[terms[k]!]!++] = slot;
    }
    const n = seen.size;
    const maxDf = Math.max(RELATED_MIN_DF + 1, RELATED_MAX_DF_SHARE * n);
    const related = new Map<number, { ids: Uint32Array; npmi: Float32Array }>();
    // Co-occurrence counts in a typed array indexed by term id, with the terms in the order first counted
    // (what a Map's insertion order gave: ties in NPMI keep it): a Map lookup per (term, skill term) pair
    // made mining take minutes at 57,000 skills.
    const counts = new Int32Array(vocabulary);
    const counted = new Uint32Array(vocabulary);
    let pairs = 0;
    for (const id of firstMet) {
      const slots = holders.subarray(start[id]!, start[id + 1]!);
      if (slots.length < RELATED_MIN_DF || slots.length > maxDf) continue;
      if (slice.due()) await slice.pause();
      let distinct = 0;
      const step = Math.max(1, slots.length / RELATED_SAMPLE);
      let sampled = 0;
      for (let i = 0; i < slots.length; i += step) {
        const doc = this.docs[slots[Math.floor(i)]!]!;
        sampled++;
        const terms = doc.terms;
        const weights = doc.weights;
        for (let k = 0; k < terms.length; k++) {
          const other = terms[k]!;
          if (other === id || (weights[k]! & TOPICAL_BIT) === 0) continue;
          if (counts[other] === 0) counted[distinct++] = other;
          counts[other]!++;
        }
      }
      const scale = slots.length / sampled;
      const pT = slots.length / n;
      const best: { id: number; npmi: number }[] = [];
      for (let j = 0; j < distinct; j++) {
        const other = counted[j]!;
        const c = counts[other]!;
        counts[other] = 0;
        if (c < RELATED_MIN_COUNT) continue;
        const dfO = topicalHolders[other]!;
        if (dfO < RELATED_MIN_DF) continue;
        const pTU = (c * scale) / n;
        const pU = dfO / n;
        if (pTU >= 1) continue;
        const npmi = Math.log(pTU / (pT * pU)) / -Math.log(pTU);
        if (npmi >= RELATED_MIN_NPMI) best.push({ id: other, npmi });
      }
      if (best.length === 0) continue;
      best.sort((a, b) => b.npmi - a.npmi);
      const top = best.slice(0, RELATED_PER_TERM);
      related.set(id, {
        ids: Uint32Array.from(top.map((b) => b.id)),
        npmi: Float32Array.from(top.map((b) => b.npmi)),
      });
      pairs += top.length;
    }
    this.related = related;
    this.relatedPairs = pairs;
    this.changesSinceMine = 0;
    this.learntFrom = learning;
  }

  /**
   * The `depth` best skills for weighted query terms (field-weighted, saturated, length-normalised term
   * matching), among the slots `admit` lets through (visibility).
   */
  search(
    query: readonly QueryTerm[],
    depth: number,
    admit: (slot: number) => boolean,
    readCap = READ_CAP,
    view: StatisticsView = PUBLIC_VIEW,
  ): ModelHit[] {
    const scores = this.scores;
    const live = this.sizeFor(view);
    const length = this.totalLength - this.hidden(view, (c) => c.length);
    const avg = live === 0 ? 1 : length / live;
    const norms = this.normsFor(avg);
    if (this.touched.length < scores.length) this.touched = new Uint32Array(scores.length);
    const touched = this.touched;
    let n = 0;
    for (const q of query) {
      const id = this.vocabulary.get(q.term);
      if (id === undefined || this.seenDf(id, view) <= 0) continue;
      const weight = q.weight * this.idf(q.term, view);
      const full = this.postings[id]!;
      // The cap is on public holders: whether a list is read whole does not depend on private skills.
      const publicDf = this.df[id]! - (this.everyGroup.df.get(id) ?? 0);
      const list = publicDf > readCap ? this.headOf(full, readCap) : full;
      const data = list.data;
      for (let i = 0; i < list.length; i++) {
        const v = data[i]!;
        const slot = v >>> 8;
        const norm = norms[slot]!;
        if (norm < 0) continue;
        const w = (v & 0x7f) * WEIGHT_STEP;
        const score = scores[slot]!;
        if (score === 0) touched[n++] = slot;
        scores[slot] = score + (weight * w * (SATURATION + 1)) / (w + norm);
      }
    }
    if (this.touchedScores.length < n) this.touchedScores = new Float64Array(this.touched.length);
    const touchedScores = this.touchedScores;
    for (let i = 0; i < n; i++) {
      const slot = touched[i]!;
      touchedScores[i] = scores[slot]!;
      scores[slot] = 0;
    }
    return topScoredSlots(touched, touchedScores, n, depth, admit);
  }

  /** What a search reads of a list with more live holders than `cap` (see `Postings.head`), brought up to date. */
  private headOf(list: Postings, cap: number): Postings {
    const lengths = this.lengths;
    const privateSlots = this.privateSlots;
    // The floor is chosen among public holders, and every private holder is in the head: an outsider reads
    // the public skills it would read in a hub without them (they are few; admission drops them after).
    if (!list.weightCounts) {
      const counts = new Int32Array(WEIGHT_LEVELS);
      for (let i = 0; i < list.length; i++) {
        const v = list.data[i]!;
        if (lengths[v >>> 8]! >= 0 && privateSlots[v >>> 8] !== 1) counts[v & 0x7f]!++;
      }
      list.weightCounts = counts;
    }
    const floor = headFloorOf(list.weightCounts, cap);
    if (!list.head || list.headFloor !== floor) {
      list.head = new Postings();
      list.headFloor = floor;
      list.headUpTo = 0;
    }
    const head = list.head;
    for (let i = list.headUpTo; i < list.length; i++) {
      const v = list.data[i]!;
      if (lengths[v >>> 8]! >= 0 && ((v & 0x7f) >= floor || privateSlots[v >>> 8] === 1)) head.push(v);
    }
    list.headUpTo = list.length;
    return head;
  }

  /** The per-slot length normalisations for the average length `avg` (see `norms`). */
  private normsFor(avg: number): Float32Array {
    if (this.normsAverage === avg && this.norms.length === this.lengths.length) return this.norms;
    const lengths = this.lengths;
    const norms = this.norms.length === lengths.length ? this.norms : new Float32Array(lengths.length);
    for (let slot = 0; slot < lengths.length; slot++) {
      const length = lengths[slot]!;
      norms[slot] = length < 0 ? -1 : SATURATION * (0.5 + (0.5 * length) / avg);
    }
    this.norms = norms;
    this.normsAverage = avg;
    return norms;
  }

  /**
   * How a skill matches terms: per term, 0 (absent), or its weight in the skill and whether it is in the
   * name, description or headings.
   */
  match(slot: number, term: string): { weight: number; topical: boolean } | null {
    const doc = this.docs[slot];
    const id = this.vocabulary.get(term);
    if (!doc || id === undefined) return null;
    const k = termIndex(doc.terms, id);
    if (k < 0) return null;
    const b = doc.weights[k]!;
    return { weight: (b & 0x7f) * WEIGHT_STEP, topical: (b & TOPICAL_BIT) !== 0 };
  }

  /**
   * Marks a held skill's terms in a scratch array indexed by term id (2: in its name, description or
   * headings; 1: in its body; 0: not held), read for each of a request's term ids, until
   * `unmarkPresence`. Reranking asks for every term of every need of 40 candidates (hundreds a candidate),
   * where a binary search per term cost several times one pass over the skill's terms to mark and clear them.
   */
  markPresence(slot: number): Uint8Array {
    this.presenceMarks = grown(this.presenceMarks, this.termNames.length);
    const marks = this.presenceMarks;
    const doc = this.docs[slot];
    if (!doc) return marks;
    const terms = doc.terms;
    const weights = doc.weights;
    for (let k = 0; k < terms.length; k++) marks[terms[k]!] = weights[k]! & TOPICAL_BIT ? 2 : 1;
    return marks;
  }

  /** Clears what `markPresence(slot)` marked. */
  unmarkPresence(slot: number): void {
    const doc = this.docs[slot];
    if (!doc) return;
    const marks = this.presenceMarks;
    const terms = doc.terms;
    for (let k = 0; k < terms.length; k++) marks[terms[k]!] = 0;
  }

  /** A held skill's term ids (ascending) and their field weights (the dense model is built from them). */
  termWeights(slot: number): { terms: Uint32Array; weights: Float32Array } | undefined {
    const doc = this.docs[slot];
    if (!doc) return undefined;
    const weights = new Float32Array(doc.terms.length);
    doc.weights.forEach((b, k) => {
      weights[k] = (b & 0x7f) * WEIGHT_STEP;
    });
    return { terms: doc.terms, weights };
  }

  /**
   * Slots of every held skill, of those the LSA model is fitted on (learningGroup's: the public ones, the
   * others are folded into it), and of one copy of each of those published several times (by name +
   * description).
   */
  slots(): { all: number[]; learning: number[]; distinct: number[] } {
    const all: number[] = [];
    const learning: number[] = [];
    const distinct: number[] = [];
    const seen = new Set<string>();
    const group = this.learningGroup();
    this.docs.forEach((doc, slot) => {
      if (!doc) return;
      all.push(slot);
      if (doc.group !== group) return;
      learning.push(slot);
      if (seen.has(doc.key)) return;
      seen.add(doc.key);
      distinct.push(slot);
    });
    return { all, learning, distinct };
  }

  /** A term's id, when some skill ever held it. */
  termIdOf(term: string): number | undefined {
    return this.vocabulary.get(term);
  }

  /** What tells a held skill from another: its name and description (copies share it). */
  keyOf(slot: number): string {
    return this.docs[slot]!.key;
  }

  /** The term with this id. */
  termName(id: number): string {
    return this.termNames[id]!;
  }

  /** Skills holding the term with this id. */
  dfOf(id: number): number {
    return this.df[id] ?? 0;
  }

  /** The model as a snapshot stores it (see SemanticModelSnapshot); it shares no array with the model. */
  async snapshot(slice = new TimeSlicer(Number.POSITIVE_INFINITY)): Promise<SemanticModelSnapshot> {
    const held: number[] = [];
    let termCount = 0;
    let aboutCount = 0;
    this.docs.forEach((doc, slot) => {
      if (!doc) return;
      held.push(slot);
      termCount += doc.terms.length;
      aboutCount += doc.about.length;
    });
    const termStart = new Int32Array(held.length + 1);
    const aboutStart = new Int32Array(held.length + 1);
    const terms = new Uint32Array(termCount);
    const weights = new Uint8Array(termCount);
    const about = new Int32Array(aboutCount);
    const aboutName = new Int32Array(held.length);
    const keys: string[] = [];
    const aboutExtra: (string[] | null)[] = [];
    const docGroups = new Int32Array(held.length);
    for (let i = 0; i < held.length; i++) {
      if (slice.due()) await slice.pause();
      const doc = this.docs[held[i]!]!;
      terms.set(doc.terms, termStart[i]!);
      weights.set(doc.weights, termStart[i]!);
      termStart[i + 1] = termStart[i]! + doc.terms.length;
      about.set(doc.about, aboutStart[i]!);
      aboutStart[i + 1] = aboutStart[i]! + doc.about.length;
      aboutName[i] = doc.aboutName;
      keys.push(doc.key);
      aboutExtra.push(doc.aboutExtra ?? null);
      docGroups[i] = doc.group;
    }
    const groupOwners: string[] = [];
    for (const [owner, group] of this.groupIds) groupOwners[group - 1] = owner;
    const relatedOf = Uint32Array.from(this.related.keys());
    const relatedStart = new Int32Array(relatedOf.length + 1);
    const relatedIds = new Uint32Array(this.relatedPairs);
    const relatedNpmi = new Float32Array(this.relatedPairs);
    relatedOf.forEach((id, i) => {
      const r = this.related.get(id)!;
      relatedIds.set(r.ids, relatedStart[i]!);
      relatedNpmi.set(r.npmi, relatedStart[i]!);
      relatedStart[i + 1] = relatedStart[i]! + r.ids.length;
    });
    return {
      termNames: [...this.termNames],
      slotCount: this.docs.length,
      docSlots: Int32Array.from(held),
      termStart,
      terms,
      weights,
      aboutStart,
      about,
      aboutName,
      keys,
      aboutExtra,
      totalLength: this.totalLength,
      changesSinceMine: this.changesSinceMine,
      relatedPairs: this.relatedPairs,
      relatedOf,
      relatedStart,
      relatedIds,
      relatedNpmi,
      groupOwners,
      docGroups,
      learntFrom: this.learntFrom,
    };
  }

  /**
   * The model a snapshot was taken of: it answers every search, match and coverage as that model did
   * (model.test.ts). Postings come back in slot order, the order skills were added in (slots only grow),
   * without the removed skills' postings a compaction had not dropped yet (searches skip those).
   */
  static async restore(
    s: SemanticModelSnapshot,
    slice = new TimeSlicer(Number.POSITIVE_INFINITY),
  ): Promise<SemanticModel> {
    const m = new SemanticModel();
    for (const term of s.termNames) m.termId(term);
    s.groupOwners.forEach((owner, i) => {
      m.groupIds.set(owner, i + 1);
    });
    m.privateSlots = grown(m.privateSlots, s.slotCount);
    const size = Math.max(1024, s.slotCount);
    m.scores = new Float32Array(size);
    m.lengths = new Float64Array(size).fill(-1);
    // Slots with no skill (removed ones) hold undefined, as in a model that held and removed them.
    for (let slot = 0; slot < s.slotCount; slot++) m.docs.push(undefined);
    for (let i = 0; i < s.docSlots.length; i++) {
      if (slice.due()) await slice.pause();
      const slot = s.docSlots[i]!;
      const from = s.termStart[i]!;
      const to = s.termStart[i + 1]!;
      const terms = s.terms.slice(from, to);
      const weights = s.weights.slice(from, to);
      const group = s.docGroups[i]!;
      let length = 0;
      for (let k = 0; k < terms.length; k++) {
        const id = terms[k]!;
        const b = weights[k]!;
        length += (b & 0x7f) * WEIGHT_STEP;
        m.df[id]!++;
        if (b & TOPICAL_BIT) m.topicalDf[id]!++;
        m.postings[id]!.push((slot << 8) | b);
      }
      m.postingCount += terms.length;
      m.docs[slot] = {
        terms,
        weights,
        length,
        key: s.keys[i]!,
        about: s.about.slice(s.aboutStart[i]!, s.aboutStart[i + 1]!),
        aboutName: s.aboutName[i]!,
        aboutExtra: s.aboutExtra[i] ?? undefined,
        group,
      };
      m.countPrivate(m.docs[slot]!, 1);
      m.privateSlots[slot] = group === PUBLIC_GROUP ? 0 : 1;
      m.lengths[slot] = length;
      m.live++;
    }
    m.totalLength = s.totalLength;
    m.changesSinceMine = s.changesSinceMine;
    m.learntFrom = s.learntFrom;
    m.relatedPairs = s.relatedPairs;
    s.relatedOf.forEach((id, i) => {
      const from = s.relatedStart[i]!;
      const to = s.relatedStart[i + 1]!;
      m.related.set(id, { ids: s.relatedIds.slice(from, to), npmi: s.relatedNpmi.slice(from, to) });
    });
    return m;
  }

  /** Figures for /metrics: skills, vocabulary, postings, related pairs, estimated bytes. */
  stats() {
    let docBytes = 0;
    for (const d of this.docs)
      if (d) docBytes += d.terms.length * 5 + 120 + d.key.length * 2 + d.about.byteLength + 64;
    let postingBytes = 0;
    for (const p of this.postings) {
      postingBytes += p.data.byteLength + 40;
      if (p.weightCounts) postingBytes += p.weightCounts.byteLength + (p.head?.data.byteLength ?? 0) + 80;
    }
    const vocabularyBytes = this.termNames.length * 80 + this.df.byteLength + this.topicalDf.byteLength;
    const scratchBytes =
      this.scratchTerms.length * 80 +
      this.scratchStamp.byteLength +
      this.scratchWeights.byteLength +
      this.scratchTopical.byteLength;
    const slotBytes =
      this.scores.byteLength +
      this.lengths.byteLength +
      this.norms.byteLength +
      this.touched.byteLength +
      this.touchedScores.byteLength;
    return {
      documents: this.live,
      vocabulary: this.termNames.length,
      postings: this.postingCount - this.deadPostings,
      relatedPairs: this.relatedPairs,
      bytes:
        docBytes +
        postingBytes +
        vocabularyBytes +
        scratchBytes +
        slotBytes +
        this.relatedPairs * 8 +
        this.related.size * 64,
    };
  }
}
