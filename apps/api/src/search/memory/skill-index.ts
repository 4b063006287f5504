import type { ReadScope } from '@atskills/db';
import { formatReference } from '@atskills/protocol';
import { LRUCache } from 'lru-cache';
import { ownString } from '../../runtime/own-string.js';
import type { TimeSlicer } from '../../runtime/time-slice.js';
import type { SearchFilters, SearchHit } from '../engine.js';
import { findSynonyms, isStopWord, nameKey, termOf, textWords, typoBudget } from '../relevance/analyze.js';
import {
  type CandidateDraw,
  EXACT_NAME,
  KNOWN_PREFIX_WEIGHT,
  LITERAL_NAME,
  MAX_COMPLETIONS,
  MAX_CORRECTIONS,
  MAX_KNOWN_COMPLETIONS,
  MAX_NAME_LOOKUPS,
  MAX_NAME_SPELLINGS,
  MAX_PREFIXED_NAMES,
  MAX_QUERY_WORDS,
  MAX_SCORING_SLOTS,
  MAX_WORD_LENGTH,
  MIN_PREFIX,
  MIN_SLOT_IDF,
  NAME_PREFIX,
  PREFIX_WEIGHT,
  PRIOR_FULL_STARS,
  PRIOR_MAX,
  RARE_WORD_RATIO,
  SEARCH_DRAW,
  STATISTICS_DRIFT,
  SYNONYM_WEIGHT,
  TYPO_WEIGHT,
  USES_STAR_WEIGHT,
} from '../tuning.js';
import { PUBLIC_GROUP, type StatisticsView, statisticsViewOf } from './group-statistics.js';
import {
  type CandidateSet,
  type Expansion,
  InvertedIndex,
  type InvertedIndexSnapshot,
  type ScoringSlot,
} from './inverted-index.js';

/** A document of the in-memory index: a search hit plus what filtering needs. */
export interface IndexDocument {
  hit: SearchHit;
  visibility: string;
  /** Markdown headings of the body (ranked above plain body text). */
  headings: string;
  body: string;
  /** Weekly and all-time uses (skills only). */
  uses?: { week: number; total: number };
}

interface StoredDocument {
  /**
   * Never changed once stored (a change stores a new object), so whoever keeps something computed from a
   * hit (the API keeps its JSON) can key it by the object. A skill's carries its uses.
   */
  hit: Readonly<SearchHit>;
  visibility: string;
  ownerKey: string;
  containerKey: string;
  nameKey: string;
  /** nameKey's words, and nameKey without separators (compared per candidate: computed once). */
  nameParts: string[];
  compactName: string;
}

/** How a page of the in-memory engine ends: the position after its last hit. */
export interface MemoryPosition {
  score: number;
  identity: string;
}

/** What the planner did to the query words (reported to the caller). */
export interface QueryReport {
  /** Typed word -> the vocabulary word it was read as. */
  corrected: Record<string, string>;
  /** Words that did not take part: stop words, words no skill holds, words past the 16th. */
  ignored: string[];
}

/** A ranked page. */
export interface MemoryPage extends QueryReport {
  hits: { hit: SearchHit; score: number }[];
  more: boolean;
}

/** Scores are rounded to four decimals: a bound on a score allows for it. */
const SCORE_ROUNDING = 1e-4;
/** nameMark values: the slot's name is the query, or starts with it. */
const EXACT_NAME_MARK = 1;
const NAME_PREFIX_MARK = 2;
const LITERAL_NAME_MARK = 3;
const LOG_PRIOR_FULL = Math.log1p(PRIOR_FULL_STARS);
const NO_USES = Object.freeze({ week: 0, total: 0 });

/** Document visible to a scope (the same rule as the database's visibleTo). */
/** A reader of public skills only. */
const NO_PRIVATE_READER: ReadScope = { isAdmin: false, readableNamespaces: [] };

function visible(scope: ReadScope, doc: StoredDocument, readable: ReadonlySet<string>): boolean {
  if (doc.visibility === 'public' || scope.isAdmin) return true;
  return readable.has(doc.ownerKey);
}

function passes(filters: SearchFilters, doc: StoredDocument): boolean {
  if (filters.source && doc.hit.source !== filters.source) return false;
  if (filters.owner && doc.ownerKey !== filters.owner.toLowerCase()) return false;
  // An `owner/name` repo arrives split (the engine's splitRepoFilter, once a search, not once a document).
  if (filters.repo && doc.containerKey !== filters.repo.toLowerCase()) return false;
  if (filters.namespace && (doc.hit.source !== 'hub' || doc.ownerKey !== filters.namespace.toLowerCase())) {
    return false;
  }
  return true;
}

function popcount(n: number): number {
  let c = 0;
  for (let v = n; v; v &= v - 1) c++;
  return c;
}

/**
 * Markdown headings of a body, one per line: a string of its own, not a view of the body (a lone heading
 * would be one, and whoever holds it would hold the whole body: see ownString).
 */
export function headingsOf(body: string): string {
  return ownString((body.match(/^#{1,6}[ \t]+.+$/gm) ?? []).map((h) => h.replace(/^#+\s*/, '')).join('\n'));
}

/** How the index reads one query word (see SkillIndex.readWord). */
interface WordReading {
  readonly expansions: readonly Expansion[];
  /** Vocabulary words within its typo budget, nearest first (its other spellings for "exact name first"). */
  readonly near: readonly string[];
  readonly corrected?: string;
}

/**
 * Query words whose reading is kept (the least recently read goes past this; all of them whenever the
 * index changes). Clearing them all when full made every common word be read again after each 4,096
 * distinct words of real traffic (2-15% more CPU a suggestion, `suggest-profile --cold-words`).
 */
export const MAX_WORD_READINGS = 4096;

/** What a snapshot keeps of a SkillIndex: the inverted index, and each slot's hit and visibility. */
export interface SkillIndexSnapshot {
  index: InvertedIndexSnapshot;
  /** The private groups' owners (lowercase namespaces), group 1 first (see GroupStatistics). */
  groups: string[];
  /** Per slot: its document's hit and visibility, or null for a slot whose document left. */
  docs: ({ hit: SearchHit; visibility: string } | null)[];
}

/** Skills and collections in memory, searchable with typo tolerance, prefixes, synonyms and relaxation. */
export class SkillIndex {
  constructor(private readonly index = new InvertedIndex()) {}
  private readonly docs: (StoredDocument | undefined)[] = [];
  /**
   * Per slot, what ranking reads for every candidate, in typed columns: following a candidate's document
   * object (and its hit, and its uses) costs cache misses that made up most of a search's time.
   */
  private columns = {
    public: new Uint8Array(1024),
    collection: new Uint8Array(1024),
    prior: new Float64Array(1024),
  };
  /** Scratch: per slot, whether its name is the query as typed (LITERAL_NAME_MARK), through separators or typos (EXACT_NAME_MARK), or starts with it. */
  private nameMark = new Uint8Array(1024);
  /** Distinct name keys, sorted (for name prefixes), and how many documents hold each. */
  private readonly sortedNames: string[] = [];
  private readonly nameCounts = new Map<string, number>();
  private readonly byIdentity = new Map<string, number>();
  /** Name key (and name key without separators) -> slots: exact names are candidates however common their words. */
  private readonly byName = new Map<string, number[]>();
  /**
   * Per owner (lowercase) of private documents, its group in the index's statistics: a reader's statistics
   * count the groups it may read (statisticsView), so a private skill's words never show to others.
   */
  private readonly groupIds = new Map<string, number>();
  /** readWord's answers, for the index generation `readingsOf` (keyed by view and word). */
  private readonly readings = new LRUCache<string, WordReading>({ max: MAX_WORD_READINGS });
  private readingsOf = -1;

  /** Documents held. */
  get size(): number {
    return this.byIdentity.size;
  }

  /** Figures for /metrics. */
  stats() {
    return {
      documents: this.byIdentity.size,
      vocabulary: this.index.vocabularySize,
      postings: this.index.postingCount,
      derivedBytes: this.index.derivedBytes,
    };
  }

  /** Adds or replaces a document. */
  upsert(doc: IndexDocument): void {
    this.remove(doc.hit.identity);
    const key = nameKey(doc.hit.name);
    const folderName = doc.hit.path.split('/').pop() ?? '';
    const name =
      doc.hit.kind === 'skill' && folderName !== doc.hit.name
        ? `${doc.hit.name} ${folderName}`
        : doc.hit.name;
    const slot = this.index.add(
      {
        name,
        description: doc.hit.kind === 'skill' ? doc.hit.description : '',
        headings: doc.headings,
        body: doc.body,
      },
      this.groupOf(doc.visibility, doc.hit.owner.toLowerCase()),
    );
    if (this.register(slot, storedHit(doc.hit, doc.uses), doc.visibility)) {
      this.sortedNames.splice(lowerBound(this.sortedNames, key), 0, key);
    }
  }

  /**
   * Stores a document the inverted index holds in `slot`, with what is looked up by name and identity;
   * true when its name key is new (the caller puts it in `sortedNames`).
   */
  private register(slot: number, hit: Readonly<SearchHit>, visibility: string): boolean {
    const key = nameKey(hit.name);
    this.docs[slot] = {
      hit,
      visibility,
      ownerKey: hit.owner.toLowerCase(),
      containerKey: hit.container.toLowerCase(),
      nameKey: key,
      nameParts: key.split('-'),
      compactName: key.replace(/-/g, ''),
    };
    this.setColumns(slot);
    this.byIdentity.set(hit.identity, slot);
    addTo(this.byName, key, slot);
    addTo(this.byName, key.replace(/-/g, ''), slot);
    const held = this.nameCounts.get(key) ?? 0;
    this.nameCounts.set(key, held + 1);
    return held === 0;
  }

  /** The statistics group of a document: PUBLIC_GROUP, or its owner's private group. */
  private groupOf(visibility: string, ownerKey: string): number {
    if (visibility === 'public') return PUBLIC_GROUP;
    let group = this.groupIds.get(ownerKey);
    if (group === undefined) {
      group = this.groupIds.size + 1;
      this.groupIds.set(ownerKey, group);
    }
    return group;
  }

  /** The statistics a reader's answers are computed over: the public documents and the groups it may read. */
  private statisticsView(scope: ReadScope): StatisticsView {
    return statisticsViewOf(scope, this.groupIds);
  }

  /** The visibility a document was indexed with (a change of it is indexed again, not patched). */
  visibilityOf(identity: string): string | undefined {
    const slot = this.byIdentity.get(identity);
    return slot === undefined ? undefined : this.docs[slot]?.visibility;
  }

  /** The index as a snapshot stores it (see SkillIndexSnapshot). */
  async snapshot(slice: TimeSlicer): Promise<SkillIndexSnapshot> {
    const docs: SkillIndexSnapshot['docs'] = [];
    for (let slot = 0; slot < this.docs.length; slot++) {
      const doc = this.docs[slot];
      docs.push(doc ? { hit: doc.hit, visibility: doc.visibility } : null);
    }
    const groups: string[] = [];
    for (const [key, group] of this.groupIds) groups[group - 1] = key;
    return { index: await this.index.snapshot(slice), docs, groups };
  }

  /**
   * The index a snapshot was taken of: the inverted index restored, and every document registered again
   * in its slot, so it answers every query as that index would (memory snapshot tests compare them).
   */
  static async restore(s: SkillIndexSnapshot, slice: TimeSlicer): Promise<SkillIndex> {
    const restored = new SkillIndex(await InvertedIndex.restore(s.index, slice));
    s.groups.forEach((key, i) => {
      restored.groupIds.set(key, i + 1);
    });
    for (let slot = 0; slot < s.docs.length; slot++) {
      if (slice.due()) await slice.pause();
      const doc = s.docs[slot];
      // Frozen again (a deserialised object is not): a stored hit never changes.
      if (doc) restored.register(slot, storedHit(doc.hit, doc.hit.uses), doc.visibility);
      else {
        restored.docs[slot] = undefined;
        restored.setColumns(slot);
      }
    }
    // Sorted once: inserting each new key in place is quadratic in the number of names.
    for (const key of [...restored.nameCounts.keys()].sort()) restored.sortedNames.push(key);
    return restored;
  }

  /**
   * Updates what a document shows without re-indexing its text (stars, visibility, counts, revision): `change`
   * edits a copy of the hit, which then replaces it.
   */
  patch(identity: string, change: (doc: { hit: SearchHit; visibility: string }) => void): boolean {
    const slot = this.byIdentity.get(identity);
    const doc = slot === undefined ? undefined : this.docs[slot];
    if (!doc) return false;
    const edited = { hit: { ...doc.hit }, visibility: doc.visibility };
    change(edited);
    // A document's visibility decides which readers' statistics count it: the caller indexes it again.
    if (edited.visibility !== doc.visibility) return false;
    doc.hit = storedHit(edited.hit, edited.hit.uses);
    doc.visibility = edited.visibility;
    this.setColumns(slot!);
    return true;
  }

  /** Writes a slot's ranking columns from its document (after it is stored or changed). */
  private setColumns(slot: number): void {
    if (slot >= this.columns.public.length) {
      const size = Math.max(slot + 1, this.columns.public.length * 2);
      const grow = <T extends Uint8Array | Float64Array>(a: T, b: T): T => {
        b.set(a);
        return b;
      };
      this.columns = {
        public: grow(this.columns.public, new Uint8Array(size)),
        collection: grow(this.columns.collection, new Uint8Array(size)),
        prior: grow(this.columns.prior, new Float64Array(size)),
      };
      this.nameMark = grow(this.nameMark, new Uint8Array(size));
    }
    const doc = this.docs[slot];
    this.columns.public[slot] = doc?.visibility === 'public' ? 1 : 0;
    this.columns.collection[slot] = doc?.hit.kind === 'collection' ? 1 : 0;
    this.columns.prior[slot] = doc ? popularityPrior(doc) : 1;
  }

  /** Sets every skill's uses (identities left out have none). */
  setUses(uses: ReadonlyMap<string, { week: number; total: number }>): void {
    for (const [identity, slot] of this.byIdentity) {
      const doc = this.docs[slot];
      if (doc?.hit.kind !== 'skill') continue;
      const next = uses.get(identity) ?? NO_USES;
      const held = doc.hit.uses ?? NO_USES;
      if (next.week === held.week && next.total === held.total) continue;
      doc.hit = storedHit(doc.hit, next);
      this.columns.prior[slot] = popularityPrior(doc);
    }
  }

  /** The stored hit of an identity. */
  get(identity: string): { hit: SearchHit; visibility: string } | undefined {
    const slot = this.byIdentity.get(identity);
    return slot === undefined ? undefined : this.docs[slot];
  }

  /** Every identity held. */
  identities(): IterableIterator<string> {
    return this.byIdentity.keys();
  }

  /** Whether the index drifted by a fifth since its scoring statistics were frozen. */
  get statisticsDue(): boolean {
    const drift = this.index.statisticsDrift;
    return drift < STATISTICS_DRIFT.below || drift > STATISTICS_DRIFT.above;
  }

  /** Freezes scoring statistics (see InvertedIndex.freezeStatistics); the engine asks `statisticsDue` first. */
  freezeStatistics(): void {
    this.index.freezeStatistics();
  }

  /**
   * Freezes again the share of each private group that drifted by a fifth on its own (the public statistics
   * refreeze on the public skills' drift alone); true when one was.
   */
  freezeDriftedGroups(): boolean {
    let frozen = false;
    for (const [group, drift] of this.index.groupDrift()) {
      if (drift >= STATISTICS_DRIFT.below && drift <= STATISTICS_DRIFT.above) continue;
      this.index.freezeGroupStatistics(group);
      frozen = true;
    }
    return frozen;
  }

  /** Builds the long lists' search structures ahead of their first search (see InvertedIndex.prepareLists). */
  prepareLists(slice: TimeSlicer, spareBytes?: number): Promise<void> {
    return this.index.prepareLists(slice, SEARCH_DRAW, spareBytes);
  }

  /** Gives back the posting lists' spare capacity in `slice`s (see InvertedIndex.trimSpare). */
  trimSpare(slice: TimeSlicer): Promise<void> {
    return this.index.trimSpare(slice);
  }

  /** Removes a document. */
  remove(identity: string): void {
    const slot = this.byIdentity.get(identity);
    if (slot === undefined) return;
    this.byIdentity.delete(identity);
    const doc = this.docs[slot];
    if (doc) {
      removeFrom(this.byName, doc.nameKey, slot);
      removeFrom(this.byName, doc.compactName, slot);
      const held = this.nameCounts.get(doc.nameKey) ?? 0;
      if (held <= 1) {
        this.nameCounts.delete(doc.nameKey);
        const at = lowerBound(this.sortedNames, doc.nameKey);
        if (this.sortedNames[at] === doc.nameKey) this.sortedNames.splice(at, 1);
      } else this.nameCounts.set(doc.nameKey, held - 1);
    }
    this.docs[slot] = undefined;
    this.setColumns(slot);
    this.index.remove(slot);
  }

  /**
   * How the index reads one query word: its expansions (itself, completions, corrections), the words one
   * typo away, and its correction. Depends only on the word and the vocabulary, so it is kept until the
   * index changes: suggestions search the same words once per need, and search-as-you-type repeats them.
   */
  private readWord(word: string, view: StatisticsView): WordReading {
    if (this.readingsOf !== this.index.generation) {
      this.readings.clear();
      this.readingsOf = this.index.generation;
    }
    // Readers of different private groups read a word in different vocabularies (none without them).
    const key = this.groupIds.size === 0 ? word : `${view === 'all' ? '*' : view.join(',')}\u0000${word}`;
    const known = this.readings.get(key);
    if (known) return known;
    const expansions: Expansion[] = [];
    const own = termOf(word);
    const surface = this.index.wordFrequency(word, view);
    // Held as typed, or through its stem ("kubernets" shares the stem of "kubernetes").
    const df = this.index.documentFrequency(own, view) > 0 ? Math.max(1, surface) : 0;
    if (df > 0) expansions.push({ terms: [own], weight: 1 });
    let completed = false;
    if (word.length >= MIN_PREFIX) {
      // A word the index holds is most likely finished: its completions count for less.
      const weight = df > 0 ? KNOWN_PREFIX_WEIGHT : PREFIX_WEIGHT;
      for (const c of this.index.completions(word, df > 0 ? MAX_KNOWN_COMPLETIONS : MAX_COMPLETIONS, view)) {
        const term = termOf(c.word);
        completed = true;
        if (term !== own) expansions.push({ terms: [term], weight });
      }
    }
    // Words the index holds are corrected only when they are rare there and a far more common word is
    // one typo away (a typo that also occurs in some body), so a real word is not read as another.
    // The nearest first: the first MAX_CORRECTIONS are its corrections, all of them its spellings in names.
    const near = this.index.nearWords(
      word,
      typoBudget(word.length),
      Math.max(MAX_CORRECTIONS, MAX_NAME_SPELLINGS),
      surface === 0 ? 0 : RARE_WORD_RATIO * surface,
      view,
    );
    for (const c of near.slice(0, MAX_CORRECTIONS)) {
      const term = termOf(c.word);
      if (term !== own) expansions.push({ terms: [term], weight: TYPO_WEIGHT[c.typos] ?? 0.3 });
    }
    // Reported as corrected when the word as typed is not in the index and is not an unfinished word.
    const best = near[0];
    const reading: WordReading = {
      expansions,
      near: near.map((c) => c.word),
      ...(best && (surface > 0 || !completed) ? { corrected: best.word } : {}),
    };
    this.readings.set(key, reading);
    return reading;
  }

  /**
   * Plans a query: scoring slots with their expansions, what was corrected or ignored, and for each typed
   * word the vocabulary words it may stand for (for "exact name first" through typos).
   */
  plan(
    query: string,
    scope: ReadScope = NO_PRIVATE_READER,
  ): { slots: ScoringSlot[]; report: QueryReport; forms: Set<string>[] } {
    return this.planFor(query, this.statisticsView(scope));
  }

  /** `plan` over the statistics of `view`. */
  private planFor(
    query: string,
    view: StatisticsView,
  ): { slots: ScoringSlot[]; report: QueryReport; forms: Set<string>[] } {
    const all = textWords(query);
    const words = all.slice(0, MAX_QUERY_WORDS);
    const ignored: string[] = all.slice(MAX_QUERY_WORDS);
    const corrected: Record<string, string> = {};
    const readAs: string[] = [...words];
    const forms = words.map((w) => new Set([w]));
    const slots: ScoringSlot[] = [];
    const slotOfWord: number[] = [];
    const allStop = words.every(isStopWord);
    const searched = new Set<string>();
    words.forEach((word, i) => {
      const stop = !allStop && isStopWord(word);
      if (stop || word.length > MAX_WORD_LENGTH) {
        ignored.push(word);
        slotOfWord[i] = -1;
        return;
      }
      const read = this.readWord(word, view);
      for (const w of read.near) forms[i]!.add(w);
      if (read.corrected !== undefined) {
        corrected[word] = read.corrected;
        readAs[i] = read.corrected;
      }
      // A copy: synonyms below add to a slot's expansions.
      const expansions = [...read.expansions];
      if (expansions.length === 0) {
        ignored.push(word);
        slotOfWord[i] = -1;
        return;
      }
      slotOfWord[i] = slots.length;
      slots.push({ expansions });
    });
    // Synonyms: every word of a matched phrase also matches each alternative (at a lower weight).
    for (const match of findSynonyms(readAs)) {
      const extra: Expansion[] = match.alternatives.map((alt) => ({
        terms: alt.map(termOf),
        weight: SYNONYM_WEIGHT,
      }));
      let target = -1;
      for (let i = match.start; i < match.end; i++) {
        const slot = slotOfWord[i];
        if (slot !== undefined && slot >= 0) {
          slots[slot]!.expansions.push(...extra);
          target = slot;
        }
      }
      const phrase = readAs.slice(match.start, match.end);
      if (target === -1 && phrase.every((w) => allStop || !isStopWord(w))) {
        // A phrase none of whose words the index holds: its synonyms alone stand for it.
        for (let i = match.start; i < match.end; i++) searched.add(words[i]!);
        slots.push({ expansions: extra });
      }
    }
    words.forEach((word, i) => {
      if (slotOfWord[i]! >= 0) searched.add(word);
    });
    // Each word once, and not one that is searched: a repeated word past the 16th is searched all the same.
    const report = { corrected, ignored: [...new Set(ignored)].filter((w) => !searched.has(w)) };
    return { slots: slots.slice(0, MAX_SCORING_SLOTS), report, forms };
  }

  /** One page of results for a viewer: best first, after `after` when given (`draw`: see SearchOptions). */
  search(
    query: string,
    filters: SearchFilters,
    scope: ReadScope,
    limit: number,
    after?: MemoryPosition,
    draw?: CandidateDraw,
  ): MemoryPage {
    const readable = new Set(scope.readableNamespaces.map((n) => n.toLowerCase()));
    const view = this.statisticsView(scope);
    const { slots, report, forms } = this.planFor(query, view);
    const typedKey = nameKey(query);
    const typed = textWords(query);
    const last = typed[typed.length - 1] ?? '';
    const names: NameQuery = {
      typedKey,
      compact: typedKey.replace(/-/g, ''),
      forms,
      // Search-as-you-type: the last word is unfinished when the index hardly holds it as a word.
      unfinished: last.length >= MIN_PREFIX && this.index.wordFrequency(last, view) < 3 ? typed : null,
    };
    const slotIdf = slots.map((s) =>
      Math.max(MIN_SLOT_IDF, ...s.expansions.map((e) => this.index.termIdf(e.terms[0]!, view) * e.weight)),
    );
    const idfTotal = slotIdf.reduce((a, b) => a + b, 0);
    // Filters narrow the candidates after drawing them, so a filtered search draws them all.
    const filtered = Boolean(filters.source || filters.owner || filters.repo || filters.namespace);
    const top = new TopHits(limit + 1);
    // Looked up even when no word is in the index: "skillcreator" is no word, but it is a name.
    const { slots: exact, complete } = this.exactNames(names);
    if (slots.length > 0 || exact.length > 0) {
      const prefixed = names.unfinished ? this.namePrefixed(names.unfinished) : [];
      const mark = this.nameMark;
      for (const slot of prefixed) mark[slot] = NAME_PREFIX_MARK;
      for (const slot of exact)
        mark[slot] = this.docs[slot]?.nameKey === typedKey ? LITERAL_NAME_MARK : EXACT_NAME_MARK;
      try {
        const set = this.index.score(slots, filtered, exact, slotIdf, draw, view);
        const context: RankContext = {
          filters,
          filtered,
          scope,
          readable,
          names,
          unlisted: !complete,
          idfTotal,
          after,
        };
        this.rank(set, slots.length, context, top);
      } finally {
        for (const slot of prefixed) mark[slot] = 0;
        for (const slot of exact) mark[slot] = 0;
      }
    }
    const ranked = top.sorted();
    // Every typed word took part in a name the viewer finds, even one no skill holds as a word.
    const named = exact.some((slot) => {
      const doc = this.docs[slot];
      return doc !== undefined && visible(scope, doc, readable) && (!filtered || passes(filters, doc));
    });
    return {
      hits: ranked.slice(0, limit).map((r) => {
        const doc = this.docs[r.slot]!;
        return { hit: doc.hit, score: r.score };
      }),
      more: ranked.length > limit,
      corrected: report.corrected,
      ignored: named ? report.ignored.filter((w) => !typed.includes(w)) : report.ignored,
    };
  }

  /**
   * Ranks the scored candidates into `top`. Written as its own tight loop over typed columns: a document
   * object is read only for a candidate that may enter the page (or when visibility or filters need it).
   */
  private rank(set: CandidateSet, slotCount: number, context: RankContext, top: TopHits): void {
    const { filters, filtered, scope, readable, names, unlisted, idfTotal, after } = context;
    const publicOnly = !scope.isAdmin && readable.size === 0;
    const readsDocument = !publicOnly || filtered;
    const { public: isPublic, collection, prior } = this.columns;
    const mark = this.nameMark;
    const docs = this.docs;
    for (let i = 0; i < set.count; i++) {
      const slot = set.slots[i]!;
      if (publicOnly && isPublic[slot] === 0) continue;
      let doc: StoredDocument | undefined;
      if (readsDocument) {
        doc = docs[slot];
        if (doc === undefined || !visible(scope, doc, readable) || (filtered && !passes(filters, doc)))
          continue;
      }
      const matched = set.matched[i]!;
      // Relaxation: collections must match every word of their name query.
      if (collection[slot] === 1 && popcount(matched) < slotCount) continue;
      const named = mark[slot]!;
      let bonus =
        named === LITERAL_NAME_MARK
          ? EXACT_NAME + LITERAL_NAME
          : named === EXACT_NAME_MARK
            ? EXACT_NAME
            : named === NAME_PREFIX_MARK
              ? NAME_PREFIX
              : 0;
      // The literal name is always listed (byName holds it), so an unlisted one is a typo reading.
      if (unlisted && bonus < EXACT_NAME) {
        doc ??= docs[slot];
        if (doc !== undefined && isExactName(doc, names)) bonus = EXACT_NAME;
      }
      const text = set.text[i]!;
      // Coverage and head coverage only lower a score: a candidate whose bound misses the page is skipped.
      if (!top.mayAdmit((text + bonus) * prior[slot]! + SCORE_ROUNDING)) continue;
      const score = relevance(
        text,
        set.covered[i]!,
        set.headMatched[i]!,
        slotCount,
        idfTotal,
        bonus,
        prior[slot]!,
      );
      if (score <= 0 || !top.mayAdmit(score)) continue;
      doc ??= docs[slot];
      if (doc === undefined) continue;
      const identity = doc.hit.identity;
      if (!top.admits(score, identity)) continue;
      if (after && (score > after.score || (score === after.score && identity <= after.identity))) continue;
      top.add(slot, score, identity);
    }
  }

  /**
   * Slots whose name starts with the typed words, the last one unfinished ("pdf-proc" for
   * "pdf-processing"): a range of the sorted names, so no candidate's document is read for it.
   */
  private namePrefixed(typed: string[]): number[] {
    const prefix = typed.join('-');
    const names = this.sortedNames;
    const out: number[] = [];
    const from = lowerBound(names, prefix);
    for (let i = from; i < names.length && i < from + MAX_PREFIXED_NAMES; i++) {
      const key = names[i]!;
      if (!key.startsWith(prefix)) break;
      // The last typed word must be a proper prefix of a name word ("pdf-proc" is not a prefix of itself).
      if (key.length === prefix.length || key[prefix.length] === '-') continue;
      for (const slot of this.byName.get(key) ?? []) if (this.docs[slot]?.nameKey === key) out.push(slot);
    }
    return out;
  }

  /**
   * Slots whose name the query is exactly (also without separators, and through corrected words), and
   * whether they are all of them (past MAX_NAME_LOOKUPS the typo readings are compared per candidate).
   */
  private exactNames(names: NameQuery): { slots: number[]; complete: boolean } {
    if (!names.typedKey) return { slots: [], complete: true };
    const out = [...(this.byName.get(names.typedKey) ?? [])];
    if (names.compact.length >= MIN_PREFIX) out.push(...(this.byName.get(names.compact) ?? []));
    if (names.forms.every((f) => f.size === 1)) return { slots: out, complete: true };
    // The names the words spell through their readings, word by word: a spelling that starts no name is
    // dropped at once, so the lookups stay few however many readings each word has.
    let keys = [''];
    let lookups = 0;
    for (let i = 0; i < names.forms.length && keys.length > 0; i++) {
      const last = i === names.forms.length - 1;
      const next: string[] = [];
      for (const k of keys) {
        for (const w of names.forms[i]!) {
          if (++lookups > MAX_NAME_LOOKUPS) return { slots: out, complete: false };
          const key = k ? `${k}-${w}` : w;
          if (last || this.startsName(`${key}-`)) next.push(key);
        }
      }
      keys = next;
    }
    for (const k of keys) out.push(...(this.byName.get(k) ?? []));
    return { slots: out, complete: true };
  }

  /** Whether a held name starts with `prefix`. */
  private startsName(prefix: string): boolean {
    return this.sortedNames[lowerBound(this.sortedNames, prefix)]?.startsWith(prefix) ?? false;
  }
}

/**
 * The hit as the index stores it: frozen, a skill's with its uses, its reference formatted once instead of
 * on every answer, every field written out in one literal (a spread copy of a hit that gained a field after
 * it was made is a dictionary object, twice the memory).
 */
function storedHit(hit: SearchHit, uses: SearchHit['uses']): Readonly<SearchHit> {
  return Object.freeze({
    kind: hit.kind,
    identity: hit.identity,
    name: hit.name,
    description: hit.description,
    source: hit.source,
    owner: hit.owner,
    container: hit.container,
    path: hit.path,
    revision: hit.revision,
    stars: hit.stars,
    descriptionTokens: hit.descriptionTokens,
    bodyTokens: hit.bodyTokens,
    warnings: hit.warnings,
    flags: hit.flags,
    skillCount: hit.skillCount,
    uses: hit.kind === 'skill' ? (uses ?? NO_USES) : undefined,
    reference: hit.reference ?? formatReference({ identity: hit.identity }),
  });
}

/** A candidate's popularity prior: stars, and weekly uses weighted like stars, lift a score by at most PRIOR_MAX. */
function popularityPrior(doc: StoredDocument): number {
  const popularity = Math.max(0, doc.hit.stars) + USES_STAR_WEIGHT * (doc.hit.uses?.week ?? 0);
  return Math.min(1 + (PRIOR_MAX * Math.log1p(popularity)) / LOG_PRIOR_FULL, 1 + PRIOR_MAX);
}

/**
 * A candidate's score. Relaxation: skills holding fewer of the meaningful words rank lower (by how many
 * and how telling those words are, and how well they match). Nothing here depends on the other
 * candidates, so a score is the same on every page.
 */
function relevance(
  text: number,
  coveredIdf: number,
  headMatched: number,
  slots: number,
  idfTotal: number,
  nameBonus: number,
  prior: number,
): number {
  // Coverage weighted by how telling each word is (the idf of the slots matched, summed by the index):
  // missing "next" costs less than missing "sprint".
  const coverage = idfTotal === 0 ? 0 : coveredIdf / idfTotal;
  const headCoverage = slots === 0 ? 0 : popcount(headMatched) / slots;
  const score = text * coverage * coverage * (0.5 + 0.5 * headCoverage) + nameBonus;
  // Four decimals: the score travels in cursors and must compare equal after the round trip.
  return Math.round(score * prior * 10_000) / 10_000;
}

/** What ranking a page needs besides the candidates. */
interface RankContext {
  filters: SearchFilters;
  filtered: boolean;
  scope: ReadScope;
  readable: ReadonlySet<string>;
  names: NameQuery;
  /** exactNames did not list every typo reading of the name: rank compares the candidates' names. */
  unlisted: boolean;
  idfTotal: number;
  after: MemoryPosition | undefined;
}

/** Position of the first of the sorted `values` that is >= `key`. */
function lowerBound(values: readonly string[], key: string): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The query as compared with names. */
interface NameQuery {
  typedKey: string;
  /** The query without separators ("styleguide" is the name "style-guide"). */
  compact: string;
  /** Per typed word, the vocabulary words it may stand for (itself and its corrections). */
  forms: Set<string>[];
  /** The typed words when the last one looks unfinished (search-as-you-type), else null. */
  unfinished: string[] | null;
}

/** The exact name, also through separators left out and typos in any of its words. */
function isExactName(doc: StoredDocument, names: NameQuery): boolean {
  if (
    doc.nameKey === names.typedKey ||
    (names.compact.length >= MIN_PREFIX && doc.compactName === names.compact)
  ) {
    return true;
  }
  const parts = doc.nameParts;
  if (parts.length !== names.forms.length) return false;
  for (let i = 0; i < parts.length; i++) if (!names.forms[i]!.has(parts[i]!)) return false;
  return true;
}

function addTo(map: Map<string, number[]>, key: string, slot: number) {
  const held = map.get(key);
  if (!held) map.set(key, [slot]);
  else if (!held.includes(slot)) held.push(slot);
}

function removeFrom(map: Map<string, number[]>, key: string, slot: number) {
  const held = map.get(key);
  if (!held) return;
  const i = held.indexOf(slot);
  if (i >= 0) held.splice(i, 1);
  if (held.length === 0) map.delete(key);
}

/**
 * The `k` best hits by (score desc, identity asc), kept sorted as they come: `k` is a page (about 21) and
 * most candidates fall below the worst kept, so one comparison rejects them without an allocation.
 */
class TopHits {
  private readonly kept: { slot: number; score: number; identity: string }[] = [];
  constructor(private readonly k: number) {}
  /** Whether a hit of this score may be kept (before its identity is read to break a tie). */
  mayAdmit(score: number): boolean {
    return this.kept.length < this.k || score >= this.kept[this.kept.length - 1]!.score;
  }
  /** Whether a hit would be kept (checked before the costlier cursor test). */
  admits(score: number, identity: string): boolean {
    if (this.kept.length < this.k) return true;
    const worst = this.kept[this.kept.length - 1]!;
    return score > worst.score || (score === worst.score && identity < worst.identity);
  }
  add(slot: number, score: number, identity: string): void {
    const kept = this.kept;
    let at = kept.length;
    while (at > 0) {
      const prev = kept[at - 1]!;
      if (prev.score > score || (prev.score === score && prev.identity < identity)) break;
      at--;
    }
    kept.splice(at, 0, { slot, score, identity });
    if (kept.length > this.k) kept.pop();
  }
  /** The kept hits, best first. */
  sorted(): { slot: number; score: number; identity: string }[] {
    return this.kept;
  }
}
