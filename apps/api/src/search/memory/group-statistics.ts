/**
 * Which private groups (a namespace's non-public skills) a reader may read: `all` for an administrator, else
 * the ids of its groups. A reader's collection statistics count public documents and these groups' only.
 */
export type StatisticsView = 'all' | readonly number[];

/** The view of a reader who may read no private skill (anonymous callers, most traffic). */
export const PUBLIC_VIEW: StatisticsView = [];

/** Group of a public document: not counted apart (the index's own counts hold it). */
export const PUBLIC_GROUP = 0;

/** What one private document added, kept until compaction drops its postings. */
interface PrivateDocument {
  group: number;
  /** Its distinct posting lists (keys of PrivateCounts.lists). */
  lists: readonly object[];
  alive: boolean;
}

/** Counts of one group (or of every private group together). */
interface PrivateCounts {
  /** Live documents. */
  live: number;
  /** Per posting list, its postings from this group's documents (dead ones too, until compaction). */
  lists: Map<object, number>;
  /** Per surface word (its number), documents of this group that held it (never decremented, as the index's). */
  words: Map<number, number>;
}

/** The snapshot form of a GroupStatistics (see InvertedIndexSnapshot): flat arrays, lists by term index. */
export interface GroupStatisticsSnapshot {
  /** Per slot, its group (PUBLIC_GROUP for a public document). */
  slotGroups: Int32Array;
  /** Triplets (group, word, documents) of the words' counts. */
  words: Int32Array;
  /** Triplets (group, term index, postings) of the statistics frozen last; empty when never frozen. */
  frozenLists: Int32Array;
  /** Pairs (group, live documents) of the statistics frozen last. */
  frozenLive: Int32Array;
  /** Whether the statistics were ever frozen (frozen with no private document, the arrays above are empty). */
  frozen: boolean;
}

/**
 * What documents outside the public index add to an inverted index's collection statistics, by group: the
 * index counts every document (its document frequencies, live count and word counts), and a reader's view
 * takes away the groups it may not read. So a word only a private skill holds is no word of the vocabulary
 * for an outsider (not read, completed or corrected into, not weighed), and no private skill moves the idf,
 * document count or coverage of an outsider's query: its answers are those of a hub without the private
 * skills it may not read, while a team's members get statistics over their own skills too (a hub holding
 * only a team's skills still weighs its words). Hand-written: statistics per reader over a shared index is
 * what search libraries leave to separate indexes, which would split every ranking a member reads.
 */
export class GroupStatistics {
  private readonly documents = new Map<number, PrivateDocument>();
  private readonly groups = new Map<number, PrivateCounts>();
  /** Every private group together: what a reader of no private group does not see. */
  private readonly everyGroup: PrivateCounts = newCounts();
  private frozen: { groups: Map<number, PrivateCounts>; everyGroup: PrivateCounts } | null = null;
  /** Whether a private document was ever added (its words stay counted, as the index's do). */
  private everAdded = false;

  /** Whether no private document was ever added: every view is then the whole index. */
  get empty(): boolean {
    return !this.everAdded;
  }

  /** A document of `group` added in `slot`, with its distinct lists and surface words. */
  add(slot: number, group: number, lists: readonly object[], words: readonly number[]): void {
    if (group === PUBLIC_GROUP) return;
    this.everAdded = true;
    const counts = this.countsOf(group);
    this.documents.set(slot, { group, lists, alive: true });
    for (const c of [counts, this.everyGroup]) {
      c.live++;
      for (const list of lists) c.lists.set(list, (c.lists.get(list) ?? 0) + 1);
      for (const word of words) c.words.set(word, (c.words.get(word) ?? 0) + 1);
    }
  }

  /** The counts of `group`, made on first use. */
  private countsOf(group: number): PrivateCounts {
    let counts = this.groups.get(group);
    if (!counts) {
      counts = newCounts();
      this.groups.set(group, counts);
    }
    return counts;
  }

  /** The document in `slot` removed (its postings stay counted until `compact`, as the index's lists do). */
  remove(slot: number): void {
    const doc = this.documents.get(slot);
    if (!doc?.alive) return;
    doc.alive = false;
    this.groups.get(doc.group)!.live--;
    this.everyGroup.live--;
  }

  /** The index dropped the postings of removed documents: so do their groups' counts. */
  compact(): void {
    for (const [slot, doc] of this.documents) {
      if (doc.alive) continue;
      for (const c of [this.groups.get(doc.group)!, this.everyGroup]) {
        for (const list of doc.lists) {
          const left = (c.lists.get(list) ?? 0) - 1;
          if (left > 0) c.lists.set(list, left);
          else c.lists.delete(list);
        }
      }
      this.documents.delete(slot);
    }
  }

  /** The index froze its statistics: the groups' share of them is frozen with them. */
  freeze(): void {
    const copy = (c: PrivateCounts): PrivateCounts => ({
      live: c.live,
      lists: new Map(c.lists),
      words: c.words,
    });
    this.frozen = {
      groups: new Map([...this.groups].map(([g, c]) => [g, copy(c)])),
      everyGroup: copy(this.everyGroup),
    };
  }

  /** Live documents of `group`, and those its frozen share counted (undefined before any freeze). */
  sizes(group: number): { live: number; frozen: number | undefined } {
    return {
      live: this.groups.get(group)?.live ?? 0,
      frozen: this.frozen ? (this.frozen.groups.get(group)?.live ?? 0) : undefined,
    };
  }

  /** The private groups held. */
  groupIds(): number[] {
    return [...this.groups.keys()];
  }

  /**
   * Freezes one group's share again, as it is now (its own drift, not the public skills'), and says how the
   * index's frozen counts move with it: each list's document frequency and the document count. No other
   * reader's view moves (what a view subtracts moves by as much), so a team's skills coming and going never
   * shows in an outsider's scores, even by when they are frozen.
   */
  refreeze(group: number): { lists: Map<object, number>; documents: number } {
    const live = this.groups.get(group);
    if (!this.frozen || !live) return { lists: new Map(), documents: 0 };
    const before = this.frozen.groups.get(group) ?? newCounts();
    const lists = new Map<object, number>();
    for (const [list, n] of live.lists) lists.set(list, n - (before.lists.get(list) ?? 0));
    for (const [list, n] of before.lists) if (!live.lists.has(list)) lists.set(list, -n);
    const documents = live.live - before.live;
    const every = this.frozen.everyGroup;
    every.live += documents;
    for (const [list, d] of lists) {
      const n = (every.lists.get(list) ?? 0) + d;
      if (n > 0) every.lists.set(list, n);
      else every.lists.delete(list);
    }
    this.frozen.groups.set(group, { live: live.live, lists: new Map(live.lists), words: live.words });
    return { lists, documents };
  }

  /** Documents the view does not see (of the frozen statistics when `frozen`). */
  hiddenDocuments(view: StatisticsView, frozen: boolean): number {
    return this.hidden(view, frozen, (c) => c.live);
  }

  /** Postings of `list` the view does not see (of the frozen statistics when `frozen`). */
  hiddenPostings(view: StatisticsView, list: object, frozen: boolean): number {
    return this.hidden(view, frozen, (c) => c.lists.get(list) ?? 0);
  }

  /** Documents holding the surface word `word` that the view does not see. */
  hiddenWord(view: StatisticsView, word: number): number {
    return this.hidden(view, false, (c) => c.words.get(word) ?? 0);
  }

  /** The private groups' share of a count less the groups the view reads. */
  private hidden(view: StatisticsView, frozen: boolean, count: (c: PrivateCounts) => number): number {
    if (this.empty) return 0;
    const from = frozen && this.frozen ? this.frozen : { groups: this.groups, everyGroup: this.everyGroup };
    return hiddenShare(view, from.groups, from.everyGroup, count);
  }

  /** The snapshot form (`termIndex`: each list's index among the snapshot's terms). */
  snapshot(slots: number, termIndex: ReadonlyMap<object, number>): GroupStatisticsSnapshot {
    const slotGroups = new Int32Array(slots);
    for (const [slot, doc] of this.documents) slotGroups[slot] = doc.group;
    const words: number[] = [];
    for (const [group, c] of this.groups) for (const [word, n] of c.words) words.push(group, word, n);
    const frozenLists: number[] = [];
    const frozenLive: number[] = [];
    for (const [group, c] of this.frozen?.groups ?? []) {
      frozenLive.push(group, c.live);
      for (const [list, n] of c.lists) {
        const t = termIndex.get(list);
        if (t !== undefined) frozenLists.push(group, t, n);
      }
    }
    return {
      slotGroups,
      words: Int32Array.from(words),
      frozenLists: Int32Array.from(frozenLists),
      frozenLive: Int32Array.from(frozenLive),
      frozen: this.frozen !== null,
    };
  }

  /**
   * The statistics a snapshot was taken of. `listsOfSlot` gives a private slot's distinct lists (the index
   * reads them from its postings); `alive` whether the slot is live.
   */
  static restore(
    s: GroupStatisticsSnapshot,
    lists: readonly object[],
    listsOfSlots: (slots: ReadonlySet<number>) => Map<number, object[]>,
    alive: (slot: number) => boolean,
  ): GroupStatistics {
    const restored = new GroupStatistics();
    const privateSlots = new Set<number>();
    for (let slot = 0; slot < s.slotGroups.length; slot++)
      if (s.slotGroups[slot] !== PUBLIC_GROUP) privateSlots.add(slot);
    if (s.frozen) restored.frozen = { groups: new Map(), everyGroup: newCounts() };
    if (privateSlots.size === 0 && s.words.length === 0 && s.frozenLive.length === 0) return restored;
    restored.everAdded = true;
    const held = listsOfSlots(privateSlots);
    for (const slot of privateSlots) {
      restored.add(slot, s.slotGroups[slot]!, held.get(slot) ?? [], []);
      if (!alive(slot)) restored.remove(slot);
    }
    for (let i = 0; i < s.words.length; i += 3) {
      const [group, word, n] = [s.words[i]!, s.words[i + 1]!, s.words[i + 2]!];
      for (const c of [restored.countsOf(group), restored.everyGroup])
        c.words.set(word, (c.words.get(word) ?? 0) + n);
    }
    if (s.frozen) {
      const groups = new Map<number, PrivateCounts>();
      const everyGroup = newCounts();
      for (let i = 0; i < s.frozenLive.length; i += 2) {
        const c = newCounts();
        c.live = s.frozenLive[i + 1]!;
        groups.set(s.frozenLive[i]!, c);
        everyGroup.live += c.live;
      }
      for (let i = 0; i < s.frozenLists.length; i += 3) {
        const list = lists[s.frozenLists[i + 1]!]!;
        const n = s.frozenLists[i + 2]!;
        groups.get(s.frozenLists[i]!)?.lists.set(list, n);
        everyGroup.lists.set(list, (everyGroup.lists.get(list) ?? 0) + n);
      }
      restored.frozen = { groups, everyGroup };
    }
    return restored;
  }
}

/**
 * What a view does not see of a count kept per private group (`groups`) and over all of them
 * (`everyGroup`): everything private, less the groups it reads.
 */
export function hiddenShare<T>(
  view: StatisticsView,
  groups: ReadonlyMap<number, T>,
  everyGroup: T,
  count: (c: T) => number,
): number {
  if (view === 'all') return 0;
  let hidden = count(everyGroup);
  if (hidden === 0) return 0;
  for (const group of view) {
    const c = groups.get(group);
    if (c !== undefined) hidden -= count(c);
  }
  return hidden;
}

/** The statistics view of a reader (administrators read every group) given a group's id by owner. */
export function statisticsViewOf(
  scope: { isAdmin: boolean; readableNamespaces: readonly string[] },
  groupIds: ReadonlyMap<string, number>,
): StatisticsView {
  if (scope.isAdmin) return 'all';
  const groups: number[] = [];
  for (const namespace of scope.readableNamespaces) {
    const group = groupIds.get(namespace.toLowerCase());
    if (group !== undefined && !groups.includes(group)) groups.push(group);
  }
  return groups.sort((a, b) => a - b);
}

function newCounts(): PrivateCounts {
  return { live: 0, lists: new Map(), words: new Map() };
}
