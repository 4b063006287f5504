import type { TimeSlicer } from '../../runtime/time-slice.js';
import { termOf, textWords, typoDistance } from '../relevance/analyze.js';
import {
  type CandidateDraw,
  COMPACT_DEAD_SHARE,
  COMPACT_MIN_DEAD,
  FIELD_AVG,
  FIELD_B,
  FIELD_BOOST,
  IDF_FLOOR,
  K1,
  MAX_BODY_WORDS,
  MAX_WORD_LENGTH,
  MIN_EXPANSION_CANDIDATES,
  RANK_DIRECTORY_MIN,
  SCAN_RATIO,
  SEARCH_DRAW,
} from '../tuning.js';
import {
  GroupStatistics,
  type GroupStatisticsSnapshot,
  PUBLIC_GROUP,
  PUBLIC_VIEW,
  type StatisticsView,
} from './group-statistics.js';

/**
 * The in-memory inverted index, written for the hub rather than taken from a library. The hub must say which
 * words it corrected or dropped, relax a query to the skills holding most of its meaningful words (weighted
 * by idf), score with field weights (name > description > headings > body) and length normalisation while
 * popularity stays a bounded prior, keep every score unchanged while the index changes (frozen statistics)
 * so keyset cursors stay valid, and bound its memory. MiniSearch, Orama and FlexSearch each missed one of
 * these when they were tried (no correction report, no per-word relaxation, or unbounded memory); MiniSearch
 * is still the relevance benchmark's BM25 baseline (success@1 0.730 against this engine's 0.949 on the same
 * 1,482 skills: bench/results/relevance.json).
 *
 * Its size (this file and skill-index.ts, ~1,500 lines) is mostly speed work measured by `npm run bench --
 * search`: impact heads, rank directories, per-candidate scratch arrays. The structures, invariants and
 * knobs are described in ../README.md, and skill-index.property.test.ts checks the whole against a naive
 * scorer.
 *
 * Postings are packed typed arrays (4 bytes of slot and field mask, 2 bytes of pre-normalised, saturated
 * term weight: saturationLevel), so memory is ~6 bytes per (term, document) pair plus the vocabulary.
 */

/** The text fields of a document, in order of weight. */
export const FIELDS = ['name', 'description', 'headings', 'body'] as const;
export type Field = (typeof FIELDS)[number];

/** Tuning of an InvertedIndex. */
export interface InvertedIndexOptions {
  /** Shortest posting list that gets a rank directory (default 2,048; Infinity: none). */
  rankDirectoryMin?: number;
}

/**
 * Where a slot's posting is in a long list, in constant time: a bit per slot the list holds, and per 32
 * slots the postings before them, so a candidate's position is one lookup and a bit count instead of a
 * galloping search (most of a query's time was those searches on lists of thousands of postings).
 * Covers the first `upTo` postings (slots below `coveredSlots`); postings added since are searched.
 */
interface RankDirectory {
  bits: Uint32Array;
  ranks: Uint32Array;
  coveredSlots: number;
  upTo: number;
}

/** What the index stores for one document (besides its postings). */
export interface IndexedText {
  name: string;
  description: string;
  headings: string;
  body: string;
}

class PostingList {
  /** slot << 4 | field mask */
  ids: Uint32Array;
  /**
   * The posting's term weight as a saturation level (saturationLevel), negated when the term is in the
   * name or description (the head): scoring
   * a candidate then reads one array instead of two (a cache miss each on a long list).
   */
  weights: Int16Array;
  n = 0;
  /** Documents holding the term when statistics were last frozen (0: not frozen yet). */
  frozenDf = 0;
  /** Scratch of InvertedIndex.add: the slot + 1 last counted into `docIndex`, and its place there. */
  docStamp = 0;
  docIndex = 0;
  /**
   * Slots of the strongest postings (see impactHead), over the first `headUpTo` postings: slots, not
   * positions, so drawing them reads one array in order instead of jumping through the postings.
   */
  private head: Uint32Array | null = null;
  private headUpTo = 0;
  private directory: RankDirectory | null = null;
  constructor(capacity: number) {
    this.ids = new Uint32Array(capacity);
    this.weights = new Int16Array(capacity);
  }
  push(slot: number, mask: number, weight: number) {
    if (this.n === this.ids.length) {
      const grow = Math.max(4, this.n * 2);
      const ids = new Uint32Array(grow);
      ids.set(this.ids);
      const weights = new Int16Array(grow);
      weights.set(this.weights);
      this.ids = ids;
      this.weights = weights;
    }
    this.ids[this.n] = (slot << 4) | mask;
    const q = saturationLevel(weight);
    this.weights[this.n] = mask & 3 ? -q : q;
    this.n++;
  }
  /**
   * Slots of the `cap` strongest postings among the first `headUpTo` (name matches first, then
   * name or description, then by weight); postings added since are returned by the caller's tail scan.
   * Built lazily with a linear-time selection and rebuilt once the tail grows past half of `cap`.
   */
  impactHead(cap: number): { head: Uint32Array; upTo: number } {
    // Kept sorted strongest first, built for the largest cap asked so far: a smaller cap reads a prefix.
    if (this.head && this.head.length >= Math.min(cap, this.headUpTo) && this.n - this.headUpTo <= cap / 2) {
      return { head: this.head.subarray(0, Math.min(cap, this.head.length)), upTo: this.headUpTo };
    }
    const n = this.n;
    const size = Math.min(n, Math.max(cap, this.head?.length ?? 0));
    const keys = new Float32Array(n);
    for (let i = 0; i < n; i++)
      keys[i] = impactKey(this.ids[i]! & 15, weightOfLevel(Math.abs(this.weights[i]!)));
    const threshold = kthLargest(keys.slice(), size);
    const picked: number[] = [];
    for (let i = 0; i < n && picked.length < size; i++) if (keys[i]! > threshold) picked.push(i);
    for (let i = 0; i < n && picked.length < size; i++) if (keys[i] === threshold) picked.push(i);
    picked.sort((a, b) => keys[b]! - keys[a]! || a - b);
    const head = Uint32Array.from(picked, (i) => this.ids[i]! >>> 4);
    this.head = head;
    this.headUpTo = n;
    return { head: head.subarray(0, Math.min(cap, head.length)), upTo: n };
  }
  /**
   * The list's rank directory, built on first use and again once an eighth of the list came after it
   * (documents added since the build are searched meanwhile).
   */
  rankDirectory(): RankDirectory {
    const n = this.n;
    const held = this.directory;
    if (held && n - held.upTo <= Math.max(256, n >>> 3)) return held;
    const ids = this.ids;
    const coveredSlots = (ids[n - 1]! >>> 4) + 1;
    const words = (coveredSlots + 31) >>> 5;
    const bits = new Uint32Array(words);
    for (let i = 0; i < n; i++) {
      const slot = ids[i]! >>> 4;
      bits[slot >>> 5]! |= 1 << (slot & 31);
    }
    const ranks = new Uint32Array(words);
    let rank = 0;
    for (let w = 0; w < words; w++) {
      ranks[w] = rank;
      rank += bitCount(bits[w]!);
    }
    this.directory = { bits, ranks, coveredSlots, upTo: n };
    return this.directory;
  }
  /** Bytes of the rank directory, when built. */
  get directoryBytes(): number {
    return this.directory ? this.directory.bits.byteLength * 2 : 0;
  }
  /** Bytes of the impact head, when built. */
  get headBytes(): number {
    return this.head?.byteLength ?? 0;
  }
  /**
   * The postings of the candidates `cands[first..]` (sorted by slot), from position `from` on, by galloping
   * search: each found one's position and candidate index appended at `hits`; returns the new hit count.
   */
  gallopInto(
    cands: Uint32Array,
    first: number,
    from: number,
    positions: Uint32Array,
    hitCandidates: Uint32Array,
    hits: number,
  ): number {
    const ids = this.ids;
    let pos = from;
    for (let c = first; c < cands.length; c++) {
      const doc = cands[c]!;
      pos = this.lowerBound(doc, pos);
      if (pos >= this.n) break;
      if (ids[pos]! >>> 4 === doc) {
        positions[hits] = pos;
        hitCandidates[hits++] = c;
      }
    }
    return hits;
  }
  /** Position of the first posting of a slot >= `doc`, searching from `from`. */
  lowerBound(doc: number, from: number): number {
    // Galloping: candidates come in slot order, so the next one is usually a short way on.
    let lo = from;
    let step = 1;
    let hi = from;
    while (hi < this.n && this.ids[hi]! >>> 4 < doc) {
      lo = hi + 1;
      hi += step;
      step *= 2;
    }
    if (hi > this.n) hi = this.n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.ids[mid]! >>> 4 < doc) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
  /** Shrinks the arrays to what they hold (after a build: doubling leaves up to half spare). */
  trim() {
    if (this.ids.length === this.n) return;
    this.ids = this.ids.slice(0, this.n);
    this.weights = this.weights.slice(0, this.n);
  }
  /** Drops postings of dead slots (and spare capacity). */
  compact(alive: (slot: number) => boolean) {
    let w = 0;
    for (let r = 0; r < this.n; r++) {
      if (!alive(this.ids[r]! >>> 4)) continue;
      this.ids[w] = this.ids[r]!;
      this.weights[w] = this.weights[r]!;
      w++;
    }
    this.n = w;
    this.ids = this.ids.slice(0, w);
    this.weights = this.weights.slice(0, w);
    this.head = null;
    this.headUpTo = 0;
    this.directory = null;
  }
}

/** Levels of a posting's saturated weight per unit (see saturationLevel). */
export const LEVELS_PER_UNIT = 32766 / (K1 + 1);

/**
 * A posting's BM25F weight as stored: its saturation tf (K1 + 1) / (tf + K1), in [0, K1 + 1), in 32,766 levels
 * (1 at least, so the sign can mark the head). Two bytes instead of a four-byte float: scoring a candidate
 * reads its weight in a long list, a cache miss each, and half the bytes keep twice the lists in cache.
 */
export function saturationLevel(weight: number): number {
  return Math.min(32766, Math.max(1, Math.round(((weight * (K1 + 1)) / (weight + K1)) * LEVELS_PER_UNIT)));
}

/** The weight a stored level stands for (the inverse of saturationLevel, up to its rounding). */
function weightOfLevel(level: number): number {
  const saturation = level / LEVELS_PER_UNIT;
  return (K1 * saturation) / (K1 + 1 - saturation);
}

/** How strong a posting is for candidate selection: a name match above all, then the head, then weight. */
function impactKey(mask: number, weight: number): number {
  return (mask & 1 ? 1000 : 0) + (mask & 3 ? weight : weight / 2);
}

/** A bit per letter of a word (by code unit, folded to 32 bits: a shared bit only lets more words through). */
function letterMask(word: string): number {
  let mask = 0;
  for (let i = 0; i < word.length; i++) mask |= 1 << (word.charCodeAt(i) & 31);
  return mask >>> 0;
}

/** Candidates one slot of a query of `slotCount` slots may draw: the draw's budget shared, at least perSlot. */
function slotShare(draw: CandidateDraw, slotCount: number): number {
  return Math.max(draw.perSlot, draw.budget / Math.max(1, slotCount));
}

/** Candidates the word as typed draws from its list: two thirds of its slot's share (see score). */
function ownWordCap(share: number): number {
  return (share * 2) / 3;
}

/** Set bits of a 32-bit number. */
function bitCount(n: number): number {
  let v = n - ((n >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** The k-th largest value of `values` (which it reorders): quickselect, linear on average. */
function kthLargest(values: Float32Array, k: number): number {
  if (k >= values.length) return Number.NEGATIVE_INFINITY;
  const target = k - 1;
  let lo = 0;
  let hi = values.length - 1;
  while (lo < hi) {
    const pivot = values[(lo + hi) >>> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (values[i]! > pivot) i++;
      while (values[j]! < pivot) j--;
      if (i <= j) {
        const t = values[i]!;
        values[i] = values[j]!;
        values[j] = t;
        i++;
        j--;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else return values[target]!;
  }
  return values[target]!;
}

/** A vocabulary word as typo correction and prefix completion see it. */
export interface VocabularyWord {
  word: string;
  /** Documents holding the word (any field), at the time it was counted. */
  df: number;
}

/** One way a query word matches the index: these terms (all of them, averaged), at this weight. */
export interface Expansion {
  terms: string[];
  weight: number;
}

/** One scoring slot of a query (a word, or a phrase its synonyms replace). */
export interface ScoringSlot {
  expansions: Expansion[];
}

/**
 * The scored candidates of the last `score` call, by position `0 <= i < count` (scratch of the index:
 * valid until its next search, so nothing is allocated per candidate).
 */
export interface CandidateSet {
  count: number;
  slots: Uint32Array;
  /** BM25F sum over scoring slots. */
  text: Float32Array;
  /** Bit per scoring slot the document matched. */
  matched: Uint32Array;
  /** Bit per scoring slot matched in the name or description. */
  headMatched: Uint32Array;
  /** Sum of the coverage weights of the slots matched (added in slot order). */
  covered: Float64Array;
}

/**
 * What a snapshot keeps of an InvertedIndex: the posting lists (by term, in the order terms were first met),
 * the surface words with their document counts and terms, and which slots are live. Typo buckets, letter
 * masks and the lazily built heads and rank directories are derived again on restore.
 */
export interface InvertedIndexSnapshot {
  terms: string[];
  /** Per term, its postings' start in `ids` and `weights` (terms.length + 1 entries). */
  listStart: Int32Array;
  frozenDf: Int32Array;
  ids: Uint32Array;
  weights: Int16Array;
  words: string[];
  wordDf: Int32Array;
  /** Per word, the index of its term in `terms`. */
  wordTerm: Int32Array;
  alive: Uint8Array;
  slots: number;
  live: number;
  deadPostings: number;
  statsN: number;
  totalPostings: number;
  /** What private documents add to the statistics, by group (see GroupStatistics). */
  groups: GroupStatisticsSnapshot;
}

/** The inverted index: slots (document numbers) are never reused until a rebuild. */
export class InvertedIndex {
  private readonly rankDirectoryMin: number;
  private readonly postings = new Map<string, PostingList>();
  /** Surface word -> its number; by number: the word, documents holding it, its term's postings. */
  private readonly wordIds = new Map<string, number>();
  private readonly words: string[] = [];
  private wordDf = new Int32Array(1024);
  private wordStamp = new Int32Array(1024);
  /** Per word, a bit per letter it holds (see letterMask): rules most typo candidates out before the edit distance. */
  private wordMask = new Uint32Array(1024);
  private readonly wordList: PostingList[] = [];
  private readonly docLists: PostingList[] = [];
  /** Vocabulary sorted for prefix search; rebuilt lazily after new words arrive. */
  private sorted: string[] = [];
  private sortedStale = false;
  /** Words by first letter and length, for typo candidates. */
  private readonly buckets = new Map<string, number[]>();
  private alive: Uint8Array = new Uint8Array(1024);
  private slots = 0;
  private live = 0;
  private deadPostings = 0;
  /** Document count of the frozen statistics (0 until frozen: then live counts are used). */
  private statsN = 0;
  private totalPostings = 0;
  /** Private documents' share of the statistics, by group: what a reader's view takes away. */
  private groups = new GroupStatistics();
  // Scratch of a search (searches are synchronous, so never shared). Per slot only `candidateAt` (the
  // candidate's position + 1) and a bit in `drawn`; the sums are per candidate position, so a search
  // touches one array as large as the index and small ones that stay in cache.
  private candidateAt = new Int32Array(1024);
  /**
   * A bit per slot drawn as a candidate, over the words drawnLow..drawnHigh: read in order, it gives the
   * candidates sorted by slot (a sort of the drawn slots took a tenth of a search).
   */
  private drawn = new Uint32Array(32);
  private drawnLow = 0;
  private drawnHigh = -1;
  /** Candidate slots of the search in progress (in slot order), and their number. */
  private candidates = new Uint32Array(4096);
  private candidateCount = 0;
  private slotBest = new Float32Array(4096);
  private phraseAcc = new Float32Array(4096);
  private total = new Float32Array(4096);
  private matched = new Uint32Array(4096);
  private head = new Uint32Array(4096);
  private covered = new Float64Array(4096);
  private touched = new Uint32Array(4096);
  private phraseTouched = new Uint32Array(4096);
  private hitPositions = new Uint32Array(4096);
  private hitCandidates = new Uint32Array(4096);
  private readonly result: CandidateSet = {
    count: 0,
    slots: new Uint32Array(0),
    text: new Float32Array(0),
    matched: new Uint32Array(0),
    headMatched: new Uint32Array(0),
    covered: new Float64Array(0),
  };
  /** Scratch of add(): 4 field frequencies per posting list of the document. */
  private docTf = new Float64Array(4096);

  /**
   * Bumped by every change of documents or statistics: what is derived from the vocabulary (a query word's
   * completions and corrections) stays valid while it is unchanged.
   */
  generation = 0;

  constructor(options: InvertedIndexOptions = {}) {
    this.rankDirectoryMin = options.rankDirectoryMin ?? RANK_DIRECTORY_MIN;
  }

  /** Live documents. */
  get size(): number {
    return this.live;
  }

  /** Distinct surface words. */
  get vocabularySize(): number {
    return this.wordIds.size;
  }

  /** Postings held (live and dead), for the memory report. */
  get postingCount(): number {
    return this.totalPostings;
  }

  /** Bytes of the rank directories built so far (derivedBytes without the impact heads). */
  get directoryBytes(): number {
    return this.listBytes((list) => list.directoryBytes);
  }

  /** Bytes of what searches derived from the lists so far (rank directories, impact heads): memory report. */
  get derivedBytes(): number {
    return this.listBytes((list) => list.directoryBytes + list.headBytes);
  }

  /** `bytesOf` summed over the posting lists. */
  private listBytes(bytesOf: (list: PostingList) => number): number {
    let bytes = 0;
    for (const list of this.postings.values()) bytes += bytesOf(list);
    return bytes;
  }

  /**
   * Adds a document and returns its slot. `group`: PUBLIC_GROUP, or the private group whose readers alone
   * count it in their statistics (see GroupStatistics).
   */
  add(text: IndexedText, group = PUBLIC_GROUP): number {
    this.generation++;
    const slot = this.slots++;
    this.ensureCapacity(this.slots);
    this.alive[slot] = 1;
    this.live++;
    // A build adds ~50 million words: each costs one lookup of its word number, and the per-document
    // counts live in stamped scratch (on the word and on its posting list) instead of a map per document.
    const stamp = slot + 1;
    const lists = this.docLists;
    lists.length = 0;
    const fieldWords = [
      textWords(text.name),
      textWords(text.description),
      textWords(text.headings),
      textWords(text.body),
    ];
    if (fieldWords[3]!.length > MAX_BODY_WORDS) fieldWords[3]!.length = MAX_BODY_WORDS;
    const privateWords: number[] = [];
    for (let f = 0; f < 4; f++) {
      for (const word of fieldWords[f]!) {
        if (word.length > MAX_WORD_LENGTH) continue;
        let id = this.wordIds.get(word);
        if (id === undefined) id = this.newWord(word);
        if (this.wordStamp[id] !== stamp) {
          this.wordStamp[id] = stamp;
          this.wordDf[id]!++;
          if (group !== PUBLIC_GROUP) privateWords.push(id);
        }
        const list = this.wordList[id]!;
        if (list.docStamp !== stamp) {
          list.docStamp = stamp;
          list.docIndex = lists.length;
          if (this.docTf.length < (lists.length + 1) * 4) {
            const grown = new Float64Array(this.docTf.length * 2);
            grown.set(this.docTf);
            this.docTf = grown;
          }
          this.docTf.fill(0, lists.length * 4, lists.length * 4 + 4);
          lists.push(list);
        }
        this.docTf[list.docIndex * 4 + f]!++;
      }
    }
    const norms = fieldWords.map(
      (w, f) => 1 - FIELD_B[f]! + (FIELD_B[f]! * Math.max(1, w.length)) / FIELD_AVG[f]!,
    );
    const tfs = this.docTf;
    for (let k = 0; k < lists.length; k++) {
      let weight = 0;
      let mask = 0;
      for (let f = 0; f < 4; f++) {
        const tf = tfs[k * 4 + f]!;
        if (tf) {
          weight += (FIELD_BOOST[f]! * tf) / norms[f]!;
          mask |= 1 << f;
        }
      }
      lists[k]!.push(slot, mask, weight);
    }
    this.totalPostings += lists.length;
    if (group !== PUBLIC_GROUP) this.groups.add(slot, group, [...lists], privateWords);
    return slot;
  }

  /** The index as a snapshot stores it (see InvertedIndexSnapshot); it shares no array with the index. */
  async snapshot(slice: TimeSlicer): Promise<InvertedIndexSnapshot> {
    const terms = [...this.postings.keys()];
    const lists = [...this.postings.values()];
    const listStart = new Int32Array(lists.length + 1);
    for (let t = 0; t < lists.length; t++) listStart[t + 1] = listStart[t]! + lists[t]!.n;
    const ids = new Uint32Array(listStart[lists.length]!);
    const weights = new Int16Array(ids.length);
    const frozenDf = new Int32Array(lists.length);
    const termIndex = new Map<PostingList, number>();
    for (let t = 0; t < lists.length; t++) {
      if (slice.due()) await slice.pause();
      const list = lists[t]!;
      ids.set(list.ids.subarray(0, list.n), listStart[t]!);
      weights.set(list.weights.subarray(0, list.n), listStart[t]!);
      frozenDf[t] = list.frozenDf;
      termIndex.set(list, t);
    }
    return {
      terms,
      listStart,
      frozenDf,
      ids,
      weights,
      words: [...this.words],
      wordDf: this.wordDf.slice(0, this.words.length),
      wordTerm: Int32Array.from(this.wordList, (list) => termIndex.get(list)!),
      alive: this.alive.slice(0, this.slots),
      slots: this.slots,
      live: this.live,
      deadPostings: this.deadPostings,
      statsN: this.statsN,
      totalPostings: this.totalPostings,
      groups: this.groups.snapshot(this.slots, termIndex),
    };
  }

  /**
   * The index a snapshot was taken of: the same postings in the same order, statistics, words and counts,
   * so it scores and draws candidates as that index would once its lazily built heads were built again
   * (inverted-index.test.ts).
   */
  static async restore(
    s: InvertedIndexSnapshot,
    slice: TimeSlicer,
    options: InvertedIndexOptions = {},
  ): Promise<InvertedIndex> {
    const index = new InvertedIndex(options);
    const lists: PostingList[] = [];
    for (let t = 0; t < s.terms.length; t++) {
      if (slice.due()) await slice.pause();
      const list = new PostingList(0);
      // Views of the snapshot's arrays (they do not overlap); a list grows into arrays of its own.
      list.ids = s.ids.subarray(s.listStart[t]!, s.listStart[t + 1]!);
      list.weights = s.weights.subarray(s.listStart[t]!, s.listStart[t + 1]!);
      list.n = list.ids.length;
      list.frozenDf = s.frozenDf[t]!;
      index.postings.set(s.terms[t]!, list);
      lists.push(list);
    }
    index.ensureWordCapacity(s.words.length);
    for (let id = 0; id < s.words.length; id++) {
      if (slice.due()) await slice.pause();
      const word = s.words[id]!;
      index.words.push(word);
      index.wordIds.set(word, id);
      index.wordDf[id] = s.wordDf[id]!;
      index.wordMask[id] = letterMask(word);
      index.wordList.push(lists[s.wordTerm[id]!]!);
      const key = `${word[0]}${word.length}`;
      const bucket = index.buckets.get(key);
      if (bucket) bucket.push(id);
      else index.buckets.set(key, [id]);
    }
    index.sortedStale = true;
    index.ensureCapacity(s.slots);
    index.alive.set(s.alive);
    index.slots = s.slots;
    index.live = s.live;
    index.deadPostings = s.deadPostings;
    index.statsN = s.statsN;
    index.totalPostings = s.totalPostings;
    index.groups = GroupStatistics.restore(
      s.groups,
      lists,
      (slots) => listsOfSlots(lists, slots),
      (slot) => index.isAlive(slot),
    );
    return index;
  }

  /** Grows the per-word arrays to hold `n` words. */
  private ensureWordCapacity(n: number): void {
    if (n <= this.wordDf.length) return;
    const size = Math.max(n, this.wordDf.length * 2);
    const df = new Int32Array(size);
    df.set(this.wordDf);
    this.wordDf = df;
    const st = new Int32Array(size);
    st.set(this.wordStamp);
    this.wordStamp = st;
    const masks = new Uint32Array(size);
    masks.set(this.wordMask);
    this.wordMask = masks;
  }

  /** Numbers a word the index has not seen, with its term's posting list and typo bucket. */
  private newWord(word: string): number {
    const id = this.words.length;
    this.words.push(word);
    this.wordIds.set(word, id);
    this.ensureWordCapacity(id + 1);
    this.wordMask[id] = letterMask(word);
    const term = termOf(word);
    let list = this.postings.get(term);
    if (!list) {
      list = new PostingList(1);
      this.postings.set(term, list);
    }
    this.wordList.push(list);
    this.sortedStale = true;
    const key = `${word[0]}${word.length}`;
    const bucket = this.buckets.get(key);
    if (bucket) bucket.push(id);
    else this.buckets.set(key, [id]);
    return id;
  }

  /** Documents holding a surface word (counted when added) that the view sees. */
  private dfOf(word: string, view: StatisticsView): number {
    const id = this.wordIds.get(word);
    return id === undefined ? 0 : this.wordDf[id]! - this.groups.hiddenWord(view, id);
  }

  /** Postings of `list` the view sees (live or dead, as `n` counts them): 0 is a term the view lacks. */
  private seenPostings(list: PostingList, view: StatisticsView): number {
    return list.n - this.groups.hiddenPostings(view, list, false);
  }

  /** Removes a document (its postings are dropped at the next compaction). */
  remove(slot: number): void {
    if (slot >= this.slots || !this.alive[slot]) return;
    this.generation++;
    this.alive[slot] = 0;
    this.live--;
    this.groups.remove(slot);
    // Postings of the slot are unknown without a scan; estimate from the average for compaction.
    this.deadPostings += this.totalPostings / Math.max(1, this.slots);
    if (this.deadPostings > this.totalPostings * COMPACT_DEAD_SHARE && this.deadPostings > COMPACT_MIN_DEAD)
      this.compact();
  }

  /** Whether a slot holds a live document. */
  isAlive(slot: number): boolean {
    return slot < this.slots && this.alive[slot] === 1;
  }

  /** Drops the postings of removed documents. */
  compact(): void {
    this.generation++;
    const alive = (s: number) => this.alive[s] === 1;
    let total = 0;
    // Emptied lists stay: words keep pointing at them, and a new document may hold the term again.
    for (const list of this.postings.values()) {
      list.compact(alive);
      total += list.n;
    }
    this.totalPostings = total;
    this.deadPostings = 0;
    this.groups.compact();
  }

  /** Whether the word occurs in the index (as typed) for the view. */
  hasWord(word: string, view: StatisticsView = PUBLIC_VIEW): boolean {
    return this.dfOf(word, view) > 0 || this.documentFrequency(termOf(word), view) > 0;
  }

  /** Documents holding the term, for the view. */
  documentFrequency(term: string, view: StatisticsView = PUBLIC_VIEW): number {
    const list = this.postings.get(term);
    return list ? this.seenPostings(list, view) : 0;
  }

  /** Vocabulary words (of the view) that start with `prefix` (not the prefix itself), most frequent first. */
  completions(prefix: string, max: number, view: StatisticsView = PUBLIC_VIEW): VocabularyWord[] {
    if (this.sortedStale) {
      this.sorted = [...this.words].sort();
      this.sortedStale = false;
    }
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.sorted[mid]! < prefix) lo = mid + 1;
      else hi = mid;
    }
    const out: VocabularyWord[] = [];
    for (let i = lo; i < this.sorted.length && out.length < 2000; i++) {
      const w = this.sorted[i]!;
      if (!w.startsWith(prefix)) break;
      if (w === prefix) continue;
      const df = this.dfOf(w, view);
      if (df > 0) out.push({ word: w, df });
    }
    // Code-point order breaks ties (localeCompare costs ~1 µs a call, and a short prefix has 2,000 words).
    return out.sort((a, b) => b.df - a.df || (a.word < b.word ? -1 : a.word > b.word ? 1 : 0)).slice(0, max);
  }

  /**
   * Vocabulary words within `maxTypos` of `word` (same first letter) held by at least `minDf` documents,
   * closest then most frequent first. The document count is checked before the distance: for a word the
   * index holds, only far more common words qualify, and those are few.
   */
  nearWords(
    word: string,
    maxTypos: number,
    max: number,
    minDf = 0,
    view: StatisticsView = PUBLIC_VIEW,
  ): (VocabularyWord & { typos: number })[] {
    const out: (VocabularyWord & { typos: number })[] = [];
    if (maxTypos === 0) return out;
    const mask = letterMask(word);
    for (let len = word.length - maxTypos; len <= word.length + maxTypos; len++) {
      const bucket = this.buckets.get(`${word[0]}${len}`);
      if (!bucket) continue;
      for (const id of bucket) {
        const df = this.wordDf[id]! - this.groups.hiddenWord(view, id);
        if (df < minDf || df <= 0) continue;
        // An edit changes at most two letters of the word's letter set (a transposition none).
        if (bitCount(mask ^ this.wordMask[id]!) > 2 * maxTypos) continue;
        const candidate = this.words[id]!;
        const typos = typoDistance(word, candidate, maxTypos);
        if (typos <= maxTypos && typos > 0) {
          out.push({ word: candidate, df, typos });
        }
      }
    }
    return out.sort((a, b) => a.typos - b.typos || b.df - a.df).slice(0, max);
  }

  /** Documents holding this surface word (as typed, any field), for the view. */
  wordFrequency(word: string, view: StatisticsView = PUBLIC_VIEW): number {
    return this.dfOf(word, view);
  }

  /**
   * Gives back the posting lists' spare capacity (what `freezeStatistics` also does) in `slice`s: a second
   * of work at 57,000 skills, and it changes no answer, so requests may run in between.
   */
  async trimSpare(slice: TimeSlicer): Promise<void> {
    for (const list of this.postings.values()) {
      if (slice.due()) await slice.pause();
      list.trim();
    }
  }

  /**
   * Builds in `slice`s what the first search reading each long list would otherwise build in its way: the
   * list's rank directory, and its impact head for the largest share a search of `draw` gives one word
   * (smaller shares read a prefix of it). A hub that just built or restored its index otherwise answered its
   * first few hundred requests at 54-66% of its warm throughput, as each common word's first reader
   * built them (docs/performance.md). Changes no answer: the same methods, called earlier. Stops once
   * `spareBytes` are spent (the memory budget's rest): first readers build the others, as before.
   */
  async prepareLists(
    slice: TimeSlicer,
    draw: CandidateDraw = SEARCH_DRAW,
    spareBytes = Number.POSITIVE_INFINITY,
  ): Promise<void> {
    const headCap = Math.round(ownWordCap(slotShare(draw, 1)));
    let spent = 0;
    for (const list of this.postings.values()) {
      if (slice.due()) await slice.pause();
      const before = list.directoryBytes + list.headBytes;
      if (list.n >= this.rankDirectoryMin) list.rankDirectory();
      if (list.n > headCap) list.impactHead(headCap);
      spent += list.directoryBytes + list.headBytes - before;
      if (spent >= spareBytes) return;
    }
  }

  /**
   * Freezes the collection statistics (document count, per-term document frequency) that scores use, so
   * that adding or removing documents leaves every other document's score as it was and a cursor stays
   * valid while the index changes. Called after a full build and when the index drifted far from them.
   */
  freezeStatistics(): void {
    this.generation++;
    this.statsN = this.live;
    for (const list of this.postings.values()) {
      list.frozenDf = list.n;
      list.trim();
    }
    this.groups.freeze();
  }

  /** Live documents now against those the frozen statistics were taken over (1 = no drift). */
  get statisticsDrift(): number {
    // Of public documents alone: when the statistics are frozen again must not tell an outsider that private
    // documents came or went (a private group's share is frozen again on its own drift: groupDrift). Frozen
    // while empty (a hub started before its first crawl), any public document is an infinite drift: the
    // statistics are frozen again, and a snapshot stored, once the first ones arrive.
    return drift(
      this.live - this.groups.hiddenDocuments(PUBLIC_VIEW, false),
      this.statsN - this.groups.hiddenDocuments(PUBLIC_VIEW, true),
    );
  }

  /** Per private group, its live documents against those its frozen share counts (1 = no drift). */
  groupDrift(): Map<number, number> {
    const out = new Map<number, number>();
    if (this.statsN === 0) return out;
    for (const group of this.groups.groupIds()) {
      const { live, frozen } = this.groups.sizes(group);
      out.set(group, drift(live, frozen ?? 0));
    }
    return out;
  }

  /** Freezes one private group's share of the statistics again (see GroupStatistics.refreeze). */
  freezeGroupStatistics(group: number): void {
    const { lists, documents } = this.groups.refreeze(group);
    if (lists.size === 0 && documents === 0) return;
    this.generation++;
    for (const [list, d] of lists) (list as PostingList).frozenDf += d;
    this.statsN += documents;
  }

  /** Inverse document frequency of a term, for the view (0 for a term it lacks). */
  termIdf(term: string, view: StatisticsView = PUBLIC_VIEW): number {
    const list = this.postings.get(term);
    return list && this.seenPostings(list, view) > 0 ? this.idf(list, view) : 0;
  }

  /**
   * Inverse document frequency (BM25's, floored so very common terms still count a little), over the
   * documents the view sees.
   */
  private idf(list: PostingList, view: StatisticsView): number {
    const frozen = this.statsN > 0;
    const n = (this.statsN || this.live) - this.groups.hiddenDocuments(view, frozen);
    const df = frozen
      ? Math.max(1, list.frozenDf - this.groups.hiddenPostings(view, list, true))
      : this.seenPostings(list, view);
    return Math.max(IDF_FLOOR, Math.log(1 + (n - df + 0.5) / (df + 0.5)));
  }

  /**
   * Scores the candidates of a query. When `exhaustive`, every live document matching at least one slot is
   * a candidate. Otherwise a term held by many documents contributes only its strongest postings as
   * candidates (a share of the draw's budget: SEARCH_DRAW for a search page) (name matches first: see impactKey), while every candidate
   * still gets its full score from every term (a lookup in the term's slot-ordered postings): so a common
   * word costs a bounded number of candidates instead of a pass over most of the index, and a score never
   * depends on which candidates were drawn. `extra` adds candidates (exact names), kept even when they
   * match no slot (a name typed without its separators is no word of the index); `coverageWeights` (one
   * per slot) are summed per candidate over the slots it matched. The answer is scratch of the index (see
   * CandidateSet); the caller filters it (visibility, filters).
   */
  score(
    slots: ScoringSlot[],
    exhaustive: boolean,
    extra: readonly number[] = [],
    coverageWeights: readonly number[] = [],
    draw: CandidateDraw = SEARCH_DRAW,
    view: StatisticsView = PUBLIC_VIEW,
  ): CandidateSet {
    // How many candidates each list may draw: the query's budget shared by its slots; within a slot the
    // word as typed draws two thirds of the slot's share, its other readings (completions, corrections,
    // synonyms) the last third by weight. A list no longer than what it may draw is read whole.
    const drawn = new Map<PostingList, number>();
    const share = slotShare(draw, slots.length);
    for (const scoring of slots) {
      const others = scoring.expansions.reduce((sum, e) => sum + (e.weight < 1 ? e.weight : 0), 0);
      for (const expansion of scoring.expansions) {
        const own = expansion.weight >= 1;
        const cap = exhaustive
          ? Number.POSITIVE_INFINITY
          : own
            ? ownWordCap(share)
            : Math.max(MIN_EXPANSION_CANDIDATES, (share * expansion.weight) / (3 * Math.max(1, others)));
        for (const term of expansion.terms) {
          const list = this.postings.get(term);
          if (list && list.n > 0 && this.seenPostings(list, view) > 0)
            drawn.set(list, Math.max(drawn.get(list) ?? 0, Math.round(cap)));
        }
      }
    }
    // Candidates: every posting of a short list, the impact head and recent tail of a long one.
    this.candidateCount = 0;
    this.drawnLow = this.drawn.length;
    this.drawnHigh = -1;
    try {
      for (const doc of extra) this.take(doc);
      for (const [list, cap] of drawn) {
        const ids = list.ids;
        if (list.n <= cap) {
          for (let i = 0; i < list.n; i++) this.take(ids[i]! >>> 4);
          continue;
        }
        const { head, upTo } = list.impactHead(cap);
        for (let i = 0; i < head.length; i++) this.take(head[i]!);
        for (let i = upTo; i < list.n; i++) this.take(ids[i]! >>> 4);
      }
      const count = this.candidateCount;
      const cands = this.drawnInOrder(count);
      this.fitScratch(count);
      this.accumulate(slots, cands, coverageWeights, view);
      return this.collect(cands, extra);
    } finally {
      if (this.drawnHigh >= this.drawnLow) this.drawn.fill(0, this.drawnLow, this.drawnHigh + 1);
      const count = this.candidateCount;
      for (let c = 0; c < count; c++) this.candidateAt[this.candidates[c]!] = 0;
      for (const scratch of [this.total, this.slotBest, this.phraseAcc]) scratch.fill(0, 0, count);
      this.matched.fill(0, 0, count);
      this.head.fill(0, 0, count);
      this.covered.fill(0, 0, count);
    }
  }

  /** Adds a live document to the candidates once. */
  private take(doc: number): void {
    const w = doc >>> 5;
    const bit = 1 << (doc & 31);
    if ((this.drawn[w]! & bit) !== 0 || this.alive[doc] !== 1) return;
    this.drawn[w]! |= bit;
    if (w < this.drawnLow) this.drawnLow = w;
    if (w > this.drawnHigh) this.drawnHigh = w;
    this.candidateCount++;
  }

  /** The drawn candidates in slot order, each with its position in `candidateAt` (position + 1). */
  private drawnInOrder(count: number): Uint32Array {
    if (this.candidates.length < count)
      this.candidates = new Uint32Array(Math.max(count, this.candidates.length * 2));
    const cands = this.candidates;
    const drawn = this.drawn;
    const at = this.candidateAt;
    let c = 0;
    for (let w = this.drawnLow; w <= this.drawnHigh; w++) {
      let bits = drawn[w]!;
      while (bits !== 0) {
        const low = bits & -bits;
        const slot = (w << 5) | (31 - Math.clz32(low));
        cands[c] = slot;
        at[slot] = ++c;
        bits ^= low;
      }
    }
    return cands.subarray(0, c);
  }

  /** Grows the per-candidate scratch to hold `count` candidates (new arrays start zeroed). */
  private fitScratch(count: number): void {
    if (count <= this.total.length) return;
    const size = Math.max(count, this.total.length * 2);
    this.slotBest = new Float32Array(size);
    this.phraseAcc = new Float32Array(size);
    this.total = new Float32Array(size);
    this.matched = new Uint32Array(size);
    this.head = new Uint32Array(size);
    this.covered = new Float64Array(size);
    this.touched = new Uint32Array(size);
    this.phraseTouched = new Uint32Array(size);
    this.hitPositions = new Uint32Array(size);
    this.hitCandidates = new Uint32Array(size);
  }

  /** The candidates that matched a slot, or are one of `extra`, with their sums, into the result scratch. */
  private collect(cands: Uint32Array, extra: readonly number[]): CandidateSet {
    const out = this.result;
    if (out.slots.length < cands.length) {
      const size = Math.max(cands.length, out.slots.length * 2);
      out.slots = new Uint32Array(size);
      out.text = new Float32Array(size);
      out.matched = new Uint32Array(size);
      out.headMatched = new Uint32Array(size);
      out.covered = new Float64Array(size);
    }
    let n = 0;
    for (let c = 0; c < cands.length; c++) {
      const matched = this.matched[c]!;
      // Every other candidate came from a slot's list: only an extra can match nothing (few: a cheap lookup).
      if (matched === 0 && !extra.includes(cands[c]!)) continue;
      out.slots[n] = cands[c]!;
      out.text[n] = this.total[c]!;
      out.matched[n] = matched;
      out.headMatched[n] = this.head[c]!;
      out.covered[n] = this.covered[c]!;
      n++;
    }
    out.count = n;
    return out;
  }

  /** Full BM25F sums of the candidates (sorted by slot) over every slot, by candidate position. */
  private accumulate(
    slots: ScoringSlot[],
    cands: Uint32Array,
    coverageWeights: readonly number[],
    view: StatisticsView,
  ): void {
    const { slotBest, phraseAcc, head, total, matched, covered, touched, candidateAt } = this;
    const phrase = this.phraseTouched;
    const positions = this.hitPositions;
    const hitCands = this.hitCandidates;
    const count = cands.length;
    for (let s = 0; s < slots.length; s++) {
      const scoring = slots[s]!;
      const bit = 1 << s;
      const coverageWeight = coverageWeights[s] ?? 0;
      let touchedN = 0;
      for (const expansion of scoring.expansions) {
        const single = expansion.terms.length === 1;
        const share = expansion.weight / expansion.terms.length;
        let phraseN = 0;
        for (const term of expansion.terms) {
          const list = this.postings.get(term);
          if (!list || list.n === 0 || this.seenPostings(list, view) === 0) continue;
          const factor = (share * this.idf(list, view)) / LEVELS_PER_UNIT;
          const ids = list.ids;
          const weights = list.weights;
          // The matching postings of the candidates: a pass over the list when the candidates are many
          // against it, else a galloping search per candidate (the loops are written out: a callback per
          // posting kept V8 from inlining the scoring). A list holds a slot at most once, so the hits
          // never outnumber the candidates.
          let hits = 0;
          if (list.n >= this.rankDirectoryMin) {
            const { bits, ranks, coveredSlots, upTo } = list.rankDirectory();
            let c = 0;
            for (; c < count; c++) {
              const doc = cands[c]!;
              if (doc >= coveredSlots) break;
              const word = bits[doc >>> 5]!;
              const bit = 1 << (doc & 31);
              if ((word & bit) === 0) continue;
              // bit - 1 is the mask of the word's lower slots (also for bit 31, through ToInt32).
              positions[hits] = ranks[doc >>> 5]! + bitCount(word & (bit - 1));
              hitCands[hits++] = c;
            }
            // Candidates past the directory: the postings added since it was built.
            hits = list.gallopInto(cands, c, upTo, positions, hitCands, hits);
          } else if (count * SCAN_RATIO >= list.n) {
            for (let i = 0; i < list.n; i++) {
              const at = candidateAt[ids[i]! >>> 4]!;
              if (at > 0) {
                positions[hits] = i;
                hitCands[hits++] = at - 1;
              }
            }
          } else {
            hits = list.gallopInto(cands, 0, 0, positions, hitCands, hits);
          }
          for (let h = 0; h < hits; h++) {
            const i = positions[h]!;
            const c = hitCands[h]!;
            let level = weights[i]!;
            if (level < 0) {
              level = -level;
              head[c]! |= bit;
            }
            const v = factor * level;
            if (single) {
              if (slotBest[c] === 0) touched[touchedN++] = c;
              if (v > slotBest[c]!) slotBest[c] = v;
            } else {
              if (phraseAcc[c] === 0) phrase[phraseN++] = c;
              phraseAcc[c]! += v;
            }
          }
        }
        for (let p = 0; p < phraseN; p++) {
          const c = phrase[p]!;
          const v = phraseAcc[c]!;
          phraseAcc[c] = 0;
          if (slotBest[c] === 0) touched[touchedN++] = c;
          if (v > slotBest[c]!) slotBest[c] = v;
        }
      }
      for (let t = 0; t < touchedN; t++) {
        const c = touched[t]!;
        total[c]! += slotBest[c]!;
        matched[c]! |= bit;
        covered[c]! += coverageWeight;
        slotBest[c] = 0;
      }
    }
  }

  private ensureCapacity(n: number) {
    if (n <= this.alive.length) return;
    const size = Math.max(n, this.alive.length * 2);
    const grow = <T extends Uint8Array | Int32Array>(a: T, make: (n: number) => T): T => {
      const b = make(size);
      b.set(a);
      return b;
    };
    this.alive = grow(this.alive, (k) => new Uint8Array(k));
    this.candidateAt = grow(this.candidateAt, (k) => new Int32Array(k));
    const words = (size + 31) >>> 5;
    if (words > this.drawn.length) {
      const drawn = new Uint32Array(words);
      drawn.set(this.drawn);
      this.drawn = drawn;
    }
  }
}

/**
 * The distinct posting lists holding each of `slots` (a snapshot keeps a private document's group, not its
 * lists): one pass over the postings, for the few private documents a hub holds.
 */
function listsOfSlots(lists: readonly PostingList[], slots: ReadonlySet<number>): Map<number, PostingList[]> {
  const out = new Map<number, PostingList[]>();
  if (slots.size === 0) return out;
  for (const list of lists) {
    for (let i = 0; i < list.n; i++) {
      const slot = list.ids[i]! >>> 4;
      if (!slots.has(slot)) continue;
      const held = out.get(slot);
      if (!held) out.set(slot, [list]);
      else if (held[held.length - 1] !== list) held.push(list);
    }
  }
  return out;
}

/** Live documents against frozen ones: 1 for none of either, past any bound when only the live ones exist. */
function drift(live: number, frozen: number): number {
  if (frozen === 0) return live === 0 ? 1 : Number.POSITIVE_INFINITY;
  return live / frozen;
}
