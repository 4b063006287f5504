// The in-memory engine against a naive reference written here: on random small corpora and queries, the
// index's pages hold exactly the documents, scores and order that scoring every document directly from its
// text gives. The query plan (corrections, completions, synonyms: SkillIndex.plan) is shared by both; what
// is checked is everything after it: postings, candidate drawing, BM25F sums, relaxation, name bonuses, the
// popularity prior, visibility, filters, the top-k heap and cursors. Corpora stay below
// MIN_EXPANSION_CANDIDATES documents, where every list is read whole, so the candidate budget never applies
// (skill-index.test.ts covers it at scale).
import { formatIdentity, type Source } from '@atskills/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SearchFilters, SearchHit } from '../engine.js';
import { nameKey, termOf, textWords } from '../relevance/analyze.js';
import {
  EXACT_NAME,
  FIELD_AVG,
  FIELD_B,
  FIELD_BOOST,
  IDF_FLOOR,
  LITERAL_NAME,
  MAX_BODY_WORDS,
  MAX_WORD_LENGTH,
  MIN_EXPANSION_CANDIDATES,
  MIN_PREFIX,
  MIN_SLOT_IDF,
  NAME_PREFIX,
  PRIOR_FULL_STARS,
  PRIOR_MAX,
  USES_STAR_WEIGHT,
} from '../tuning.js';
import { LEVELS_PER_UNIT, saturationLevel } from './inverted-index.js';
import { type IndexDocument, type MemoryPosition, SkillIndex } from './skill-index.js';

type Scope = { isAdmin: boolean; readableNamespaces: string[] };

// A vocabulary with stems in common (deploy, deploying), synonyms (k8s, kubernetes; pr, pull request;
// changelog, release notes), a stop word ("the") and a name written with and without a separator.
const VOCABULARY = [
  'deploy',
  'deploying',
  'deployment',
  'kubernetes',
  'k8s',
  'release',
  'notes',
  'changelog',
  'pdf',
  'review',
  'testing',
  'the',
  'style',
  'guide',
  'styleguide',
  'pull',
  'request',
  'pr',
];
// Typos, unfinished words, a word no document holds and names without their separators (no word of the
// index, but a name when some document is named "pdf review", say), for queries.
const QUERY_ONLY = [
  'kubernets',
  'deplyo',
  'relese',
  'depl',
  'kube',
  'revi',
  'zebra',
  'pdfreview',
  'deploytesting',
  'releasenotes',
];
const OWNERS = ['acme', 'beta'];

const word = fc.constantFrom(...VOCABULARY);
const words = (max: number) => fc.array(word, { maxLength: max }).map((w) => w.join(' '));

const documentArb = fc
  .record({
    kind: fc.constantFrom('skill', 'skill', 'skill', 'collection') as fc.Arbitrary<'skill' | 'collection'>,
    source: fc.constantFrom('gh', 'hub') as fc.Arbitrary<'gh' | 'hub'>,
    owner: fc.constantFrom(...OWNERS),
    container: fc.constantFrom('tools', 'skills'),
    nameWords: fc.array(word, { minLength: 1, maxLength: 3 }),
    separator: fc.constantFrom('-', '_', ' '),
    // The folder is usually named as the skill; when not, its name is indexed with the skill's.
    folder: fc.option(word, { freq: 3 }),
    description: words(8),
    headings: words(3),
    body: words(30),
    visibility: fc.constantFrom('public', 'public', 'private'),
    stars: fc.nat({ max: 5000 }),
    week: fc.nat({ max: 100 }),
  })
  .map((d): IndexDocument => {
    const name = d.nameWords.join(d.separator);
    const path = d.folder === null ? nameKey(name) : `${d.folder}-dir`;
    const source: Source = d.source;
    const hit: SearchHit = {
      kind: d.kind,
      identity: formatIdentity(source, `${d.owner}/${d.container}/${path}`),
      name,
      description: d.description,
      source: d.source,
      owner: d.owner,
      container: d.container,
      path,
      revision: 'r1',
      stars: d.stars,
      descriptionTokens: 1,
      bodyTokens: 1,
      warnings: [],
      flags: [],
      ...(d.kind === 'collection' ? { skillCount: 2 } : {}),
    };
    return {
      hit,
      visibility: d.visibility,
      headings: d.headings,
      body: d.body,
      ...(d.kind === 'skill' ? { uses: { week: d.week, total: d.week } } : {}),
    };
  });

const corpusArb = fc.uniqueArray(documentArb, {
  minLength: 1,
  maxLength: MIN_EXPANSION_CANDIDATES - 1,
  selector: (d) => d.hit.identity,
});

const queryArb = fc.oneof(
  fc
    .array(fc.constantFrom(...VOCABULARY, ...QUERY_ONLY), { minLength: 1, maxLength: 4 })
    .map((w) => w.join(' ')),
  fc.constantFrom(...VOCABULARY, ...QUERY_ONLY),
);

const scopeArb: fc.Arbitrary<Scope> = fc.constantFrom(
  { isAdmin: false, readableNamespaces: [] },
  { isAdmin: false, readableNamespaces: ['acme'] },
  { isAdmin: false, readableNamespaces: ['ACME', 'beta'] },
  { isAdmin: true, readableNamespaces: [] },
);

const filtersArb: fc.Arbitrary<SearchFilters> = fc.record(
  {
    source: fc.constantFrom('gh', 'hub') as fc.Arbitrary<'gh' | 'hub'>,
    owner: fc.constantFrom('acme', 'Beta'),
    repo: fc.constantFrom('tools', 'SKILLS'),
    namespace: fc.constantFrom('acme', 'beta'),
  },
  { requiredKeys: [] },
);

function build(docs: readonly IndexDocument[]): SkillIndex {
  const index = new SkillIndex();
  for (const d of docs) index.upsert(d);
  index.freezeStatistics();
  return index;
}

/** A document as the reference reads it: its terms' BM25F weights, computed from its text alone. */
interface ReferenceDocument {
  doc: IndexDocument;
  /** term -> weight (its saturation level, as the index stores it) and whether it is in name or description. */
  terms: Map<string, { level: number; head: boolean }>;
  /** Surface words of every field. */
  words: Set<string>;
  nameKey: string;
  compact: string;
  prior: number;
}

function referenceDocument(doc: IndexDocument): ReferenceDocument {
  const { hit } = doc;
  const folder = hit.path.split('/').pop() ?? '';
  const name = hit.kind === 'skill' && folder !== hit.name ? `${hit.name} ${folder}` : hit.name;
  const fields = [name, hit.kind === 'skill' ? hit.description : '', doc.headings, doc.body].map(textWords);
  fields[3] = fields[3]!.slice(0, MAX_BODY_WORDS);
  const counts = new Map<string, number[]>();
  const seen = new Set<string>();
  fields.forEach((fieldWords, f) => {
    for (const w of fieldWords) {
      if (w.length > MAX_WORD_LENGTH) continue;
      seen.add(w);
      const tf = counts.get(termOf(w)) ?? [0, 0, 0, 0];
      tf[f]!++;
      counts.set(termOf(w), tf);
    }
  });
  const norms = fields.map((w, f) => 1 - FIELD_B[f]! + (FIELD_B[f]! * Math.max(1, w.length)) / FIELD_AVG[f]!);
  const terms = new Map<string, { level: number; head: boolean }>();
  for (const [term, tf] of counts) {
    let weight = 0;
    for (let f = 0; f < 4; f++) if (tf[f]) weight += (FIELD_BOOST[f]! * tf[f]!) / norms[f]!;
    terms.set(term, { level: saturationLevel(weight), head: tf[0]! + tf[1]! > 0 });
  }
  const key = nameKey(hit.name);
  const week = hit.kind === 'skill' ? (doc.uses?.week ?? 0) : 0;
  const popularity = Math.max(0, hit.stars) + USES_STAR_WEIGHT * week;
  const prior = Math.min(
    1 + (PRIOR_MAX * Math.log1p(popularity)) / Math.log1p(PRIOR_FULL_STARS),
    1 + PRIOR_MAX,
  );
  return { doc, terms, words: seen, nameKey: key, compact: key.replace(/-/g, ''), prior };
}

const bits = (n: number) => n.toString(2).replace(/0/g, '').length;

/**
 * The naive ranking: every document visible to `scope` and passing `filters` scored on its own, sorted by
 * score then identity. The plan (scoring slots, typed words' readings) comes from `index`.
 */
function referenceSearch(
  index: SkillIndex,
  docs: readonly IndexDocument[],
  query: string,
  filters: SearchFilters,
  scope: Scope,
): { identity: string; score: number }[] {
  const { slots, forms } = index.plan(query, scope);
  const isExact = exactNameTest(query, forms);
  const refs = docs.map(referenceDocument);
  const readable = new Set(scope.readableNamespaces.map((n) => n.toLowerCase()));
  const readableBy = (doc: IndexDocument) =>
    doc.visibility === 'public' || scope.isAdmin || readable.has(doc.hit.owner.toLowerCase());
  // A reader's statistics are those of the skills it may read: a private skill moves no outsider's score.
  const seen = refs.filter((r) => readableBy(r.doc));
  const df = (term: string) => seen.filter((r) => r.terms.has(term)).length;
  const idf = (term: string) => {
    const d = Math.max(1, df(term));
    return Math.max(IDF_FLOOR, Math.log(1 + (seen.length - d + 0.5) / (d + 0.5)));
  };
  const slotIdf = slots.map((s) =>
    Math.max(
      MIN_SLOT_IDF,
      ...s.expansions.map((e) => (df(e.terms[0]!) > 0 ? idf(e.terms[0]!) : 0) * e.weight),
    ),
  );
  const idfTotal = slotIdf.reduce((a, b) => a + b, 0);
  const typedKey = nameKey(query);
  const typed = textWords(query);
  const last = typed[typed.length - 1] ?? '';
  const unfinished = last.length >= MIN_PREFIX && seen.filter((r) => r.words.has(last)).length < 3;
  const prefix = typed.join('-');

  const out: { identity: string; score: number }[] = [];
  for (const ref of refs) {
    const { hit, visibility } = ref.doc;
    const owner = hit.owner.toLowerCase();
    if (visibility !== 'public' && !scope.isAdmin && !readable.has(owner)) continue;
    if (filters.source && hit.source !== filters.source) continue;
    if (filters.owner && owner !== filters.owner.toLowerCase()) continue;
    if (filters.repo && hit.container.toLowerCase() !== filters.repo.toLowerCase()) continue;
    if (filters.namespace && (hit.source !== 'hub' || owner !== filters.namespace.toLowerCase())) continue;
    // BM25F per scoring slot: the best of its expansions (a phrase's terms summed), summed over slots.
    let text = 0;
    let matched = 0;
    let head = 0;
    let covered = 0;
    slots.forEach((slot, s) => {
      let best = 0;
      let touched = false;
      for (const expansion of slot.expansions) {
        const share = expansion.weight / expansion.terms.length;
        let phrase = 0;
        let phraseTouched = false;
        for (const term of expansion.terms) {
          const posting = ref.terms.get(term);
          if (!posting) continue;
          if (posting.head) head |= 1 << s;
          const v = ((share * idf(term)) / LEVELS_PER_UNIT) * posting.level;
          touched = true;
          if (expansion.terms.length === 1) {
            if (v > best) best = Math.fround(v);
          } else {
            phrase = Math.fround(phrase + v);
            phraseTouched = true;
          }
        }
        if (phraseTouched && phrase > best) best = phrase;
      }
      if (!touched) return;
      text = Math.fround(text + best);
      matched |= 1 << s;
      covered += slotIdf[s]!;
    });
    // A document holding no query term is a hit only by its name ("pdfreview" is the name "pdf review").
    const exact = isExact(ref);
    if (matched === 0 && !exact) continue;
    // Relaxation: a collection must match every word.
    if (hit.kind === 'collection' && bits(matched) < slots.length) continue;
    const prefixed =
      unfinished &&
      ref.nameKey.startsWith(prefix) &&
      ref.nameKey.length > prefix.length &&
      ref.nameKey[prefix.length] !== '-';
    const bonus = exact
      ? EXACT_NAME + (ref.nameKey === typedKey ? LITERAL_NAME : 0)
      : prefixed
        ? NAME_PREFIX
        : 0;
    const coverage = idfTotal === 0 ? 0 : covered / idfTotal;
    const headCoverage = slots.length === 0 ? 0 : bits(head) / slots.length;
    const raw = text * coverage * coverage * (0.5 + 0.5 * headCoverage) + bonus;
    const score = Math.round(raw * ref.prior * 10_000) / 10_000;
    if (score > 0) out.push({ identity: hit.identity, score });
  }
  return out.sort(
    (a, b) => b.score - a.score || (a.identity < b.identity ? -1 : a.identity > b.identity ? 1 : 0),
  );
}

/** Whether a document's name is the query: as typed, without separators, or through the words' readings. */
function exactNameTest(query: string, forms: Set<string>[]): (ref: ReferenceDocument) => boolean {
  const typedKey = nameKey(query);
  const compactQuery = typedKey.replace(/-/g, '');
  let spellings = [''];
  for (const f of forms) spellings = spellings.flatMap((k) => [...f].map((w) => (k ? `${k}-${w}` : w)));
  const combos = forms.reduce((n, f) => n * f.size, 1);
  return (ref) =>
    typedKey !== '' &&
    (ref.nameKey === typedKey ||
      ref.compact === typedKey ||
      (compactQuery.length >= MIN_PREFIX && (ref.nameKey === compactQuery || ref.compact === compactQuery)) ||
      (combos > 1 && spellings.some((k) => ref.nameKey === k || ref.compact === k)));
}

const page = (
  index: SkillIndex,
  q: string,
  filters: SearchFilters,
  scope: Scope,
  limit: number,
  after?: MemoryPosition,
) => index.search(q, filters, scope, limit, after);
const ranked = (p: { hits: { hit: SearchHit; score: number }[] }) =>
  p.hits.map((h) => ({ identity: h.hit.identity, score: h.score }));

const RUNS = { numRuns: 100 };

describe('SkillIndex against a naive reference scorer', () => {
  it('ranks the same documents, with the same scores, in the same order', () => {
    fc.assert(
      fc.property(corpusArb, queryArb, filtersArb, scopeArb, (docs, query, filters, scope) => {
        const index = build(docs);
        expect(ranked(page(index, query, filters, scope, 100))).toEqual(
          referenceSearch(index, docs, query, filters, scope),
        );
      }),
      RUNS,
    );
  });

  it('answers only documents holding one of the query terms or named by the query, visible to the viewer', () => {
    fc.assert(
      fc.property(corpusArb, queryArb, scopeArb, (docs, query, scope) => {
        const index = build(docs);
        const plan = index.plan(query, scope);
        const terms = new Set(plan.slots.flatMap((s) => s.expansions.flatMap((e) => e.terms)));
        const isExact = exactNameTest(query, plan.forms);
        const readable = new Set(scope.readableNamespaces.map((n) => n.toLowerCase()));
        for (const { hit } of page(index, query, {}, scope, 100).hits) {
          const ref = referenceDocument(docs.find((d) => d.hit.identity === hit.identity)!);
          const doc = ref.doc;
          expect([...ref.terms.keys()].some((t) => terms.has(t)) || isExact(ref)).toBe(true);
          if (doc.visibility !== 'public')
            expect(scope.isAdmin || readable.has(hit.owner.toLowerCase())).toBe(true);
        }
      }),
      RUNS,
    );
  });

  it('never shows a private document to an anonymous viewer', () => {
    const anonymous = { isAdmin: false, readableNamespaces: [] };
    fc.assert(
      fc.property(corpusArb, queryArb, filtersArb, (docs, query, filters) => {
        const index = build(docs);
        const privates = new Set(docs.filter((d) => d.visibility !== 'public').map((d) => d.hit.identity));
        for (const { hit } of page(index, query, filters, anonymous, 100).hits)
          expect(privates.has(hit.identity)).toBe(false);
      }),
      RUNS,
    );
  });

  it('puts a visible skill whose name is the query first', () => {
    fc.assert(
      fc.property(corpusArb, fc.nat(), scopeArb, (docs, pick, scope) => {
        const index = build(docs);
        const readable = new Set(scope.readableNamespaces.map((n) => n.toLowerCase()));
        const named = docs.filter(
          (d) =>
            d.hit.kind === 'skill' &&
            (d.visibility === 'public' || scope.isAdmin || readable.has(d.hit.owner)),
        );
        fc.pre(named.length > 0);
        const target = named[pick % named.length]!;
        const first = page(index, target.hit.name, {}, scope, 1).hits[0];
        expect(first && nameKey(first.hit.name)).toBe(nameKey(target.hit.name));
        // Typed without its separators too ("pdfreview"), though that is no word of the index.
        const compact = (name: string) => nameKey(name).replace(/-/g, '');
        fc.pre(compact(target.hit.name).length >= MIN_PREFIX);
        const joined = page(index, compact(target.hit.name), {}, scope, 1).hits[0];
        expect(joined && compact(joined.hit.name)).toBe(compact(target.hit.name));
      }),
      RUNS,
    );
  });

  it('pages through the cursor exactly as one big page', () => {
    fc.assert(
      fc.property(
        corpusArb,
        queryArb,
        scopeArb,
        fc.integer({ min: 1, max: 4 }),
        (docs, query, scope, size) => {
          const index = build(docs);
          const all = ranked(page(index, query, {}, scope, 100));
          const paged: { identity: string; score: number }[] = [];
          let after: MemoryPosition | undefined;
          for (;;) {
            const p = page(index, query, {}, scope, size, after);
            paged.push(...ranked(p));
            const last = p.hits[p.hits.length - 1];
            if (!p.more || !last) break;
            after = { score: last.score, identity: last.hit.identity };
          }
          expect(paged).toEqual(all);
        },
      ),
      RUNS,
    );
  });

  it('answers a reader exactly as an index without the private skills it may not read', () => {
    // SPEC 2.3: an outsider finds no trace of a private collection. Statistics included: a word only a
    // private skill holds is not read, corrected into or weighed, and no idf or document count moves.
    fc.assert(
      fc.property(
        corpusArb,
        fc.array(queryArb, { minLength: 1, maxLength: 3 }),
        scopeArb,
        (docs, queries, scope) => {
          const readable = new Set(scope.readableNamespaces.map((n) => n.toLowerCase()));
          const seen = docs.filter(
            (d) => d.visibility === 'public' || scope.isAdmin || readable.has(d.hit.owner.toLowerCase()),
          );
          const whole = build(docs);
          const without = build(seen);
          for (const q of queries) {
            const a = page(whole, q, {}, scope, 100);
            const b = page(without, q, {}, scope, 100);
            expect(ranked(a)).toEqual(ranked(b));
            expect({ corrected: a.corrected, ignored: a.ignored }).toEqual({
              corrected: b.corrected,
              ignored: b.ignored,
            });
          }
        },
      ),
      RUNS,
    );
  });

  it('answers a reader as an index without the private skills it may not read, whenever they arrived', () => {
    // Public skills first, then the private ones, the statistics frozen again as the engine does: a team's
    // skills coming and going move no outsider's score, not even by when they are frozen.
    const grow = (docs: readonly IndexDocument[]) => {
      const index = new SkillIndex();
      for (const d of docs) if (d.visibility === 'public') index.upsert(d);
      index.freezeStatistics();
      for (const d of docs) {
        if (d.visibility === 'public') continue;
        index.upsert(d);
        if (index.statisticsDue) index.freezeStatistics();
        index.freezeDriftedGroups();
      }
      return index;
    };
    fc.assert(
      fc.property(
        corpusArb,
        fc.array(queryArb, { minLength: 1, maxLength: 3 }),
        scopeArb,
        (docs, queries, scope) => {
          const readable = new Set(scope.readableNamespaces.map((n) => n.toLowerCase()));
          const seen = docs.filter(
            (d) => d.visibility === 'public' || scope.isAdmin || readable.has(d.hit.owner.toLowerCase()),
          );
          const whole = grow(docs);
          const without = grow(seen);
          for (const q of queries) {
            const a = page(whole, q, {}, scope, 100);
            const b = page(without, q, {}, scope, 100);
            expect(ranked(a)).toEqual(ranked(b));
            expect({ corrected: a.corrected, ignored: a.ignored }).toEqual({
              corrected: b.corrected,
              ignored: b.ignored,
            });
          }
        },
      ),
      RUNS,
    );
  });

  it('answers the same after documents are added one by one as after a build', () => {
    // Adds only: a removed document's words stay in the vocabulary (and its postings in document
    // frequencies until compaction) until the next build, so removals are close to a rebuild, not equal.
    fc.assert(
      fc.property(
        corpusArb,
        fc.array(queryArb, { minLength: 1, maxLength: 4 }),
        scopeArb,
        (docs, queries, scope) => {
          const built = build(docs);
          const grown = new SkillIndex();
          const half = Math.ceil(docs.length / 2);
          for (const d of [...docs.slice(half)].reverse()) grown.upsert(d);
          grown.freezeStatistics();
          for (const q of queries) grown.search(q, {}, scope, 5);
          for (const d of docs.slice(0, half)) grown.upsert(d);
          grown.freezeStatistics();
          for (const q of queries)
            expect(ranked(page(grown, q, {}, scope, 100))).toEqual(ranked(page(built, q, {}, scope, 100)));
        },
      ),
      RUNS,
    );
  });
});
