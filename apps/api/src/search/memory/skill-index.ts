import type { ReadScope } from '@atskills/db';
import type { SearchFilters, SearchHit } from '../engine.js';
import {
  findSynonyms,
  MAX_QUERY_WORDS,
  MAX_WORD_LENGTH,
  nameKey,
  STOP_WORDS,
  termOf,
  textWords,
  typoBudget,
} from '../relevance/analyze.js';
import { type Candidate, type Expansion, InvertedIndex, type ScoringSlot } from './inverted-index.js';

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
  hit: SearchHit;
  visibility: string;
  ownerKey: string;
  containerKey: string;
  nameKey: string;
  /** nameKey's words, and nameKey without separators (compared per candidate: computed once). */
  nameParts: string[];
  compactName: string;
  uses: { week: number; total: number };
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

// Weights of the ways a query word can match (its own word = 1).
const PREFIX_WEIGHT = 0.7;
const KNOWN_PREFIX_WEIGHT = 0.3;
/** A word the index holds is also read as a near word that many times more common. */
const RARE_WORD_RATIO = 20;
const TYPO_WEIGHT = [1, 0.6, 0.4];
const SYNONYM_WEIGHT = 0.8;
const MAX_COMPLETIONS = 12;
/**
 * Completions of a word the index holds (most likely finished): few, each a posting list every candidate
 * is scored against.
 */
const MAX_KNOWN_COMPLETIONS = 6;
const MAX_CORRECTIONS = 3;
/** Shortest word completed as a prefix. */
const MIN_PREFIX = 3;
/** Relevance added for the exact name (so it comes first) and for a name the query starts. */
const EXACT_NAME = 1000;
const NAME_PREFIX = 200;
/** Largest lift popularity gives: 8% (a match weaker by more than that is never lifted over a stronger one). */
const PRIOR_MAX = 0.08;
/** Stars at which the prior is full. */
const PRIOR_FULL_STARS = 100_000;
/** What one distinct client a week weighs in the prior, in stars (as in the Postgres engine: USES_STAR_WEIGHT). */
const USES_STAR_WEIGHT = 50;
const LOG_PRIOR_FULL = Math.log1p(PRIOR_FULL_STARS);
const NO_USES = Object.freeze({ week: 0, total: 0 });

/** Document visible to a scope (the same rule as the database's visibleTo). */
function visible(scope: ReadScope, doc: StoredDocument, readable: ReadonlySet<string>): boolean {
  if (doc.visibility === 'public' || scope.isAdmin) return true;
  return readable.has(doc.ownerKey);
}

function passes(filters: SearchFilters, doc: StoredDocument): boolean {
  if (filters.source && doc.hit.source !== filters.source) return false;
  if (filters.owner && doc.ownerKey !== filters.owner.toLowerCase()) return false;
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

/** Markdown headings of a body, one per line. */
export function headingsOf(body: string): string {
  return (body.match(/^#{1,6}[ \t]+.+$/gm) ?? []).map((h) => h.replace(/^#+\s*/, '')).join('\n');
}

/** Skills and collections in memory, searchable with typo tolerance, prefixes, synonyms and relaxation. */
export class SkillIndex {
  private readonly index = new InvertedIndex();
  private readonly docs: (StoredDocument | undefined)[] = [];
  private readonly byIdentity = new Map<string, number>();
  /** Name key (and name key without separators) -> slots: exact names are candidates however common their words. */
  private readonly byName = new Map<string, number[]>();

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
    const slot = this.index.add({
      name,
      description: doc.hit.kind === 'skill' ? doc.hit.description : '',
      headings: doc.headings,
      body: doc.body,
    });
    this.docs[slot] = {
      hit: doc.hit,
      visibility: doc.visibility,
      ownerKey: doc.hit.owner.toLowerCase(),
      containerKey: doc.hit.container.toLowerCase(),
      nameKey: key,
      nameParts: key.split('-'),
      compactName: key.replace(/-/g, ''),
      uses: doc.uses ?? NO_USES,
    };
    this.byIdentity.set(doc.hit.identity, slot);
    addTo(this.byName, key, slot);
    addTo(this.byName, key.replace(/-/g, ''), slot);
  }

  /** Updates what a document shows without re-indexing its text (stars, visibility, counts, revision). */
  patch(identity: string, change: (doc: { hit: SearchHit; visibility: string }) => void): boolean {
    const slot = this.byIdentity.get(identity);
    const doc = slot === undefined ? undefined : this.docs[slot];
    if (!doc) return false;
    change(doc);
    return true;
  }

  /** Sets every skill's uses (identities left out have none). */
  setUses(uses: ReadonlyMap<string, { week: number; total: number }>): void {
    for (const [identity, slot] of this.byIdentity) {
      const doc = this.docs[slot];
      if (doc && doc.hit.kind === 'skill') doc.uses = uses.get(identity) ?? NO_USES;
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

  /** Freezes scoring statistics (see InvertedIndex.freezeStatistics); again once the index drifted by a fifth. */
  freezeStatistics(force = false): void {
    const drift = this.index.statisticsDrift;
    if (force || drift < 0.8 || drift > 1.25) this.index.freezeStatistics();
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
    }
    this.docs[slot] = undefined;
    this.index.remove(slot);
  }

  /**
   * Plans a query: scoring slots with their expansions, what was corrected or ignored, and for each typed
   * word the vocabulary words it may stand for (for "exact name first" through typos).
   */
  plan(query: string): { slots: ScoringSlot[]; report: QueryReport; forms: Set<string>[] } {
    const all = textWords(query);
    const words = all.slice(0, MAX_QUERY_WORDS);
    const ignored: string[] = all.slice(MAX_QUERY_WORDS);
    const corrected: Record<string, string> = {};
    const readAs: string[] = [...words];
    const forms = words.map((w) => new Set([w]));
    const slots: ScoringSlot[] = [];
    const slotOfWord: number[] = [];
    const allStop = words.every((w) => STOP_WORDS.has(w));
    words.forEach((word, i) => {
      const stop = !allStop && STOP_WORDS.has(word);
      if (stop || word.length > MAX_WORD_LENGTH) {
        ignored.push(word);
        slotOfWord[i] = -1;
        return;
      }
      const expansions: Expansion[] = [];
      const own = termOf(word);
      const surface = this.index.wordFrequency(word);
      // Held as typed, or through its stem ("kubernets" shares the stem of "kubernetes").
      const df = this.index.documentFrequency(own) > 0 ? Math.max(1, surface) : 0;
      if (df > 0) expansions.push({ terms: [own], weight: 1 });
      let completed = false;
      if (word.length >= MIN_PREFIX) {
        // A word the index holds is most likely finished: its completions count for less.
        const weight = df > 0 ? KNOWN_PREFIX_WEIGHT : PREFIX_WEIGHT;
        for (const c of this.index.completions(word, df > 0 ? MAX_KNOWN_COMPLETIONS : MAX_COMPLETIONS)) {
          const term = termOf(c.word);
          completed = true;
          if (term !== own) expansions.push({ terms: [term], weight });
        }
      }
      // Words the index holds are corrected only when they are rare there and a far more common word is
      // one typo away (a typo that also occurs in some body), so a real word is not read as another.
      const near = this.index.nearWords(
        word,
        typoBudget(word.length),
        MAX_CORRECTIONS,
        surface === 0 ? 0 : RARE_WORD_RATIO * surface,
      );
      const usable = near;
      for (const c of usable) {
        forms[i]!.add(c.word);
        const term = termOf(c.word);
        if (term !== own) expansions.push({ terms: [term], weight: TYPO_WEIGHT[c.typos] ?? 0.3 });
      }
      // Reported as corrected when the word as typed is not in the index and is not an unfinished word.
      const best = usable[0];
      if (best && (surface > 0 || !completed)) {
        corrected[word] = best.word;
        readAs[i] = best.word;
      }
      if (expansions.length === 0) {
        ignored.push(word);
        slotOfWord[i] = -1;
        return;
      }
      slotOfWord[i] = slots.length;
      slots.push({ expansions, meaningful: true });
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
      if (target === -1 && phrase.every((w) => allStop || !STOP_WORDS.has(w))) {
        // A phrase none of whose words the index holds: its synonyms alone stand for it.
        for (const w of phrase) ignored.splice(ignored.indexOf(w), 1);
        slots.push({ expansions: extra, meaningful: true });
      }
    }
    return { slots: slots.slice(0, 30), report: { corrected, ignored }, forms };
  }

  /** One page of results for a viewer: best first, after `after` when given. */
  search(
    query: string,
    filters: SearchFilters,
    scope: ReadScope,
    limit: number,
    after?: MemoryPosition,
  ): MemoryPage {
    const { slots, report, forms } = this.plan(query);
    const readable = new Set(scope.readableNamespaces.map((n) => n.toLowerCase()));
    const typedKey = nameKey(query);
    const typed = textWords(query);
    const last = typed[typed.length - 1] ?? '';
    const names: NameQuery = {
      typedKey,
      compact: typedKey.replace(/-/g, ''),
      forms,
      // Search-as-you-type: the last word is unfinished when the index hardly holds it as a word.
      unfinished: last.length >= MIN_PREFIX && this.index.wordFrequency(last) < 3 ? typed : null,
    };
    const slotIdf = slots.map((s) =>
      Math.max(0.05, ...s.expansions.map((e) => this.index.termIdf(e.terms[0]!) * e.weight)),
    );
    const idfTotal = slotIdf.reduce((a, b) => a + b, 0);
    const accept = (slot: number) => {
      const doc = this.docs[slot];
      return doc !== undefined && visible(scope, doc, readable) && passes(filters, doc);
    };
    // Filters narrow the candidates after drawing them, so a filtered search draws them all.
    const exhaustive = Boolean(filters.source || filters.owner || filters.repo || filters.namespace);
    const candidates =
      slots.length > 0 ? this.index.score(slots, accept, exhaustive, this.exactNames(names)) : [];
    const meaningful = slots.length;
    const ranked: { slot: number; score: number; identity: string }[] = [];
    for (const c of candidates) {
      const doc = this.docs[c.slot]!;
      const score = this.relevance(c, doc, meaningful, names, slotIdf, idfTotal);
      if (score <= 0) continue;
      if (after && (score > after.score || (score === after.score && doc.hit.identity <= after.identity))) {
        continue;
      }
      ranked.push({ slot: c.slot, score, identity: doc.hit.identity });
    }
    const top = selectTop(ranked, limit + 1);
    return {
      hits: top.slice(0, limit).map((r) => {
        const doc = this.docs[r.slot]!;
        const hit = doc.hit.kind === 'skill' ? { ...doc.hit, uses: { ...doc.uses } } : doc.hit;
        return { hit, score: r.score };
      }),
      more: top.length > limit,
      ...report,
    };
  }

  /** Slots whose name the query is exactly (also without separators, and through corrected words). */
  private exactNames(names: NameQuery): number[] {
    if (!names.typedKey) return [];
    const out = [...(this.byName.get(names.typedKey) ?? [])];
    if (names.compact.length >= MIN_PREFIX) out.push(...(this.byName.get(names.compact) ?? []));
    let combos = 1;
    for (const f of names.forms) combos *= f.size;
    if (combos > 1 && combos <= 64) {
      let keys = [''];
      for (const f of names.forms) keys = keys.flatMap((k) => [...f].map((w) => (k ? `${k}-${w}` : w)));
      for (const k of keys) out.push(...(this.byName.get(k) ?? []));
    }
    return out;
  }

  private relevance(
    c: Candidate,
    doc: StoredDocument,
    slots: number,
    names: NameQuery,
    slotIdf: number[],
    idfTotal: number,
  ): number {
    const covered = popcount(c.matched);
    // Relaxation: skills holding fewer of the meaningful words rank lower (by how many and how telling
    // those words are, and how well they match); collections must match every word of their name query.
    // Nothing here depends on the other candidates, so a score is the same on every page.
    if (doc.hit.kind === 'collection' && covered < slots) return 0;
    // Coverage weighted by how telling each word is: missing "next" costs less than missing "sprint".
    let coveredIdf = 0;
    for (let s = 0; s < slots; s++) if (c.matched & (1 << s)) coveredIdf += slotIdf[s]!;
    const coverage = idfTotal === 0 ? 0 : coveredIdf / idfTotal;
    const headCoverage = slots === 0 ? 0 : popcount(c.headMatched) / slots;
    let text = c.text * coverage * coverage * (0.5 + 0.5 * headCoverage);
    if (isExactName(doc, names)) text += EXACT_NAME;
    else if (isNamePrefix(doc.nameParts, names)) text += NAME_PREFIX;
    // Popularity (stars, and weekly uses weighted like stars) lifts a score by at most PRIOR_MAX.
    const popularity = Math.max(0, doc.hit.stars) + USES_STAR_WEIGHT * doc.uses.week;
    const prior = 1 + (PRIOR_MAX * Math.log1p(popularity)) / LOG_PRIOR_FULL;
    // Four decimals: the score travels in cursors and must compare equal after the round trip.
    return Math.round(text * Math.min(prior, 1 + PRIOR_MAX) * 10_000) / 10_000;
  }
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

/** The name starts with the typed words, the last one unfinished ("pdf-proc" for "pdf-processing"). */
function isNamePrefix(parts: string[], names: NameQuery): boolean {
  const typed = names.unfinished;
  if (!typed) return false;
  if (parts.length < typed.length) return false;
  const last = typed.length - 1;
  return typed.every((w, i) => (i < last ? parts[i] === w : parts[i]!.startsWith(w) && parts[i] !== w));
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

/** The `k` best by (score desc, identity asc), without sorting every candidate. */
function selectTop<T extends { score: number; identity: string }>(items: T[], k: number): T[] {
  const better = (a: T, b: T) => a.score > b.score || (a.score === b.score && a.identity < b.identity);
  if (items.length <= k * 4)
    return items.sort((a, b) => (better(a, b) ? -1 : better(b, a) ? 1 : 0)).slice(0, k);
  // Min-heap of the best k seen so far (root = worst kept).
  const heap: T[] = [];
  const up = (i: number) => {
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!better(heap[p]!, heap[i]!)) break;
      [heap[p], heap[i]] = [heap[i]!, heap[p]!];
      i = p;
    }
  };
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && better(heap[m]!, heap[l]!)) m = l;
      if (r < heap.length && better(heap[m]!, heap[r]!)) m = r;
      if (m === i) return;
      [heap[m], heap[i]] = [heap[i]!, heap[m]!];
      i = m;
    }
  };
  for (const item of items) {
    if (heap.length < k) {
      heap.push(item);
      up(heap.length - 1);
    } else if (better(item, heap[0]!)) {
      heap[0] = item;
      down(0);
    }
  }
  return heap.sort((a, b) => (better(a, b) ? -1 : better(b, a) ? 1 : 0));
}
