import {
  type ChangeMark,
  currentChangeMark,
  type Database,
  loadSearchDocuments,
  loadSearchFolders,
  loadSkillUses,
  type ReadScope,
  type SearchDocumentRow,
  type SearchFolderRow,
} from '@atskills/db';
import { type SnapshotEvent, SnapshotKeeper } from '../runtime/snapshots.js';
import { TimeSlicer } from '../runtime/time-slice.js';
import { ChangeFollower, type FollowedStructure } from './change-follower.js';
import { readSearchCursor, searchCursor } from './cursor.js';
import {
  type SearchEngine,
  type SearchFilters,
  type SearchOptions,
  type SearchPage,
  splitRepoFilter,
} from './engine.js';
import { flagSummary, hitFromRow } from './hits.js';
import { headingsOf, type IndexDocument, SkillIndex, type SkillIndexSnapshot } from './memory/skill-index.js';
import { applySkillChanges } from './skill-changes.js';
import {
  BUILD_BATCH,
  BYTES_PER_DOCUMENT,
  BYTES_PER_POSTING,
  BYTES_PER_WORD,
  USES_REFRESH_MS,
} from './tuning.js';

/** The name the in-memory search index is stored under (model_snapshots). */
export const SEARCH_INDEX_SNAPSHOT = 'search-index';
/** The code a stored index depends on (snapshotFormat): the index, the analyser, the hits and this file. */
const SNAPSHOT_SOURCES = [
  'search/memory',
  'search/relevance',
  'search/hits',
  'search/tuning',
  'search/memory-engine',
];
/** What a snapshot of the engine keeps: the index, and the revision held of each skill. */
interface SearchIndexSnapshot {
  index: SkillIndexSnapshot;
  revisions: [identity: string, revision: string][];
}

/** Prefix of cursors handed out while Postgres answered for the index ('.' never occurs in base64url). */
const FALLBACK_CURSOR = 'p.';

type UsesMap = Map<string, { week: number; total: number }>;

/** Weekly and all-time uses of a skill. */
interface SkillUsesFigures {
  week: number;
  total: number;
}

/** What /metrics and /readyz report about the in-memory index. */
export interface MemoryIndexStatus {
  ready: boolean;
  documents: number;
  vocabulary: number;
  postings: number;
  /** Estimated bytes held by the index. */
  bytes: number;
  /** Seconds the last full build took (null before the first one ends). */
  buildSeconds: number | null;
  /** Seconds the index took to restore from its stored snapshot (null when it was built). */
  restoreSeconds: number | null;
  /** Skills loaded so far by a build in progress. */
  loading: number;
  /** Set when the index stays off (over its memory budget, or its build failed). */
  error?: string;
}

/** The in-memory engine, with what its plugin drives. */
export interface MemoryEngine extends Omit<SearchEngine, 'close'>, FollowedStructure {
  status(): MemoryIndexStatus;
  /** This process wrote uses: the next search re-reads them first (others' within USES_REFRESH_MS). */
  noteUsesWritten(): void;
  /**
   * Settles once the index first serves (built or restored), before the first build's snapshot is stored
   * and its catch-up ends; or once the first build ended without it (failed, or the engine closed).
   */
  firstServes(): Promise<void>;
  /**
   * Whether the first build will load the stored snapshot (its header passes every check): a restart.
   * Asked before the first build starts; false once it has.
   */
  storedSnapshotUsable(): Promise<boolean>;
}

export interface MemoryEngineOptions {
  /** Refuse to hold more than this (bytes); the engine then answers from Postgres. */
  maxBytes: number;
  onError?: (err: unknown) => void;
  /**
   * Milliseconds the build and catch-ups hold the event loop at a time (SLICE_MS; benchmarks compare with
   * Infinity, a build that never lets requests in between its rows).
   */
  buildSliceMs?: number;
  /**
   * Keep the index in Postgres (model_snapshots, runtime/snapshots.ts): stored after each build and each
   * refreeze of its statistics, loaded at start in place of the first build and caught up from its mark.
   */
  snapshots?: boolean;
  /** What happened to a snapshot (restored, stored, or why the stored one was not used), for the log. */
  onSnapshot?: (event: SnapshotEvent) => void;
  /** An index that took changes is stored again once its snapshot is this old (6 hours: snapshotDue). */
  snapshotEveryMs?: number;
}

function skillDocument(row: SearchDocumentRow, uses: ReadonlyMap<string, SkillUsesFigures>): IndexDocument {
  const held = uses.get(row.identity);
  return {
    ...(held ? { uses: held } : {}),
    hit: hitFromRow({ ...row, kind: 'skill', skillCount: null }),
    visibility: row.visibility,
    headings: headingsOf(row.body),
    body: row.body,
  };
}

function folderDocument(row: SearchFolderRow): IndexDocument {
  return {
    hit: hitFromRow({ ...row, kind: 'collection' }),
    visibility: row.visibility,
    headings: '',
    body: '',
  };
}

/**
 * Search from memory: the skills index is read from Postgres at start (while it loads, Postgres answers),
 * then kept current by the index change feed (NOTIFY) plus a scan of rows by transaction id, so a lost
 * notification delays a change but never loses it. Postgres stays the durable source and the fallback.
 */
export function createMemoryEngine(
  db: Database,
  fallback: SearchEngine,
  options: MemoryEngineOptions,
): MemoryEngine {
  let index: SkillIndex | null = null;
  let mark: ChangeMark | null = null;
  /** Postgres id -> identity, for rows that leave (their identity may be all a change scan returns). */
  let revisions = new Map<string, string>();
  let loading = 0;
  let buildSeconds: number | null = null;
  let usesReadAt = 0;
  /** The uses last read (new and changed skills take theirs from here). */
  let uses: UsesMap = new Map();
  /** This process wrote uses: the next search re-reads them first. */
  let usesDirty = false;
  let usesReading: Promise<void> | null = null;
  let nowServes!: () => void;
  const serves = new Promise<void>((resolve) => {
    nowServes = resolve;
  });

  const estimateBytes = (i: SkillIndex) => {
    const s = i.stats();
    return (
      s.postings * BYTES_PER_POSTING +
      s.vocabulary * BYTES_PER_WORD +
      s.documents * BYTES_PER_DOCUMENT +
      s.derivedBytes
    );
  };

  /** Builds the long lists' search structures ahead of their first search, within the memory budget. */
  const prepareLists = (target: SkillIndex, slice: TimeSlicer) =>
    target.prepareLists(slice, options.maxBytes - estimateBytes(target));

  const loadFolders = async (target: SkillIndex) => {
    const folders = await loadSearchFolders(db);
    const seen = new Set<string>();
    for (const f of folders) {
      seen.add(f.identity);
      const held = target.get(f.identity);
      const patched =
        held?.hit.kind === 'collection' &&
        held.hit.name === f.name &&
        target.patch(f.identity, (d) => {
          d.hit.revision = f.revision;
          d.hit.stars = f.stars;
          d.hit.skillCount = f.skillCount;
          d.hit.description = `${f.skillCount} skills`;
          d.visibility = f.visibility;
        });
      // A new folder, or one made private or public (indexed again: see SkillIndex.patch).
      if (!patched) target.upsert(folderDocument(f));
    }
    return seen;
  };

  const doBuild = async () => {
    const started = performance.now();
    const fresh = new SkillIndex();
    // A batch is a second of work at this size: requests (answered by Postgres meanwhile) get in between.
    const slice = new TimeSlicer(options.buildSliceMs);
    const nextRevisions = new Map<string, string>();
    // The mark is taken before reading, so whatever commits during the load is caught up right after.
    const startMark = await currentChangeMark(db);
    const buildUses = await loadSkillUses(db);
    let afterId = 0;
    loading = 0;
    for (;;) {
      const rows = await loadSearchDocuments(db, afterId, BUILD_BATCH);
      if (rows.length === 0) break;
      for (const row of rows) {
        if (slice.due()) await slice.pause();
        fresh.upsert(skillDocument(row, buildUses));
        nextRevisions.set(row.identity, row.revision);
      }
      afterId = rows[rows.length - 1]!.id;
      loading += rows.length;
      if (estimateBytes(fresh) > options.maxBytes) {
        throw new Error(
          `the search index would exceed its memory budget (${Math.round(options.maxBytes / 2 ** 20)} MiB) at ${loading} skills`,
        );
      }
    }
    const folders = await loadFolders(fresh);
    for (const id of [...fresh.identities()]) {
      if (slice.due()) await slice.pause();
      if (fresh.get(id)?.hit.kind === 'collection' && !folders.has(id)) fresh.remove(id);
    }
    await fresh.trimSpare(slice);
    fresh.freezeStatistics();
    index = fresh;
    revisions = nextRevisions;
    mark = startMark;
    nowServes();
    uses = buildUses;
    usesReadAt = Date.now();
    buildSeconds = (performance.now() - started) / 1000;
    snapshots.built();
    follower.error = undefined;
    await storeSnapshot(slice);
    await doSync();
  };

  /** Stores the index as it is now (with the revision held of each skill). */
  const storeSnapshot = (slice: TimeSlicer) => {
    const held = index;
    if (!held || !mark) return Promise.resolve();
    return snapshots.store(
      mark,
      revisions.size,
      async () => ({ index: await held.snapshot(slice), revisions: [...revisions] }),
      slice,
    );
  };

  /** Puts a stored index in place; a reason when it cannot. */
  const restoreSnapshot = async (value: SearchIndexSnapshot, from: ChangeMark, slice: TimeSlicer) => {
    const restored = await SkillIndex.restore(value.index, slice);
    if (estimateBytes(restored) > options.maxBytes) return 'it would exceed the memory budget';
    index = restored;
    revisions = new Map(value.revisions);
    mark = from;
    nowServes();
    return null;
  };

  /** Re-reads every skill's uses (one grouped query; uses roll up per day, so this is rare). */
  const readUses = (): Promise<void> => {
    usesReading ??= (async () => {
      usesDirty = false;
      usesReadAt = Date.now();
      const fresh = await loadSkillUses(db);
      uses = fresh;
      index?.setUses(fresh);
    })().finally(() => {
      usesReading = null;
    });
    return usesReading;
  };

  const doSync = async () => {
    const target = index;
    if (!target || !mark) return;
    const slice = new TimeSlicer(options.buildSliceMs);
    const scan = await applySkillChanges(
      db,
      mark,
      {
        revisionOf: (identity) => revisions.get(identity),
        visibilityOf: (identity) => target.visibilityOf(identity),
        identities: () => revisions.keys(),
        get size() {
          return revisions.size;
        },
        remove: (identity) => {
          revisions.delete(identity);
          target.remove(identity);
        },
        patch: (row) =>
          target.patch(row.identity, (d) => {
            d.hit.stars = row.stars;
            d.hit.flags = row.flags.map(flagSummary);
            d.visibility = row.visibility;
          }),
        upsert: (row) => {
          target.upsert(skillDocument(row, uses));
          revisions.set(row.identity, row.revision);
        },
      },
      slice,
    );
    if (!scan) {
      // The transaction counter wrapped since the last scan: start over.
      await doBuild();
      return;
    }
    if (scan.changed > 0) {
      const folders = await loadFolders(target);
      for (const id of [...target.identities()]) {
        if (target.get(id)?.hit.kind === 'collection' && !folders.has(id)) target.remove(id);
      }
    }
    if (Date.now() - usesReadAt >= USES_REFRESH_MS) await readUses();
    snapshots.tookChanges(scan.applied);
    let refrozen = target.statisticsDue;
    if (refrozen) {
      await target.trimSpare(slice);
      target.freezeStatistics();
    }
    if (target.freezeDriftedGroups()) refrozen = true;
    mark = scan.nextMark;
    if (refrozen || snapshots.due) await storeSnapshot(slice);
  };

  const snapshots = new SnapshotKeeper<SearchIndexSnapshot>(db, {
    name: SEARCH_INDEX_SNAPSHOT,
    sources: SNAPSHOT_SOURCES,
    enabled: options.snapshots ?? false,
    onSnapshot: options.onSnapshot,
    onError: options.onError,
    everyMs: options.snapshotEveryMs,
    sliceMs: options.buildSliceMs,
  });
  const follower = new ChangeFollower({
    ready: () => index !== null,
    // Uses as they are now after a restore (a build reads them first), then every change since its mark;
    // then, serving already, the lists prepared (requests run between the slices and build what they read
    // first themselves).
    build: async () => {
      await snapshots.buildOrRestore({
        restore: restoreSnapshot,
        catchUp: async () => {
          await readUses();
          await doSync();
        },
        build: doBuild,
      });
      if (index) await prepareLists(index, new TimeSlicer(options.buildSliceMs));
    },
    catchUp: doSync,
    onError: options.onError,
  });
  const sync = () => follower.sync();
  const build = () => follower.build();

  const fromFallback = async (...args: Parameters<SearchEngine['search']>): Promise<SearchPage> => {
    const page = await fallback.search(...args);
    return {
      ...page,
      nextCursor: page.nextCursor === null ? null : `${FALLBACK_CURSOR}${page.nextCursor}`,
      engine: { name: fallback.name, fallback: follower.error ? 'outage' : 'building' },
    };
  };

  return {
    name: 'memory',
    async search(
      query: string,
      filters: SearchFilters,
      viewer: ReadScope,
      limit: number,
      cursor?: string,
      pageOptions?: SearchOptions,
    ) {
      if (cursor?.startsWith(FALLBACK_CURSOR)) {
        return fromFallback(query, filters, viewer, limit, cursor.slice(FALLBACK_CURSOR.length));
      }
      if (!index) return fromFallback(query, filters, viewer, limit, cursor);
      if (follower.dirty) await sync();
      if (usesDirty) await readUses().catch((err) => options.onError?.(err));
      const after = cursor ? readSearchCursor('memory', query, filters, cursor) : undefined;
      // An `owner/name` repo is split here, once, rather than for every candidate document.
      const where = splitRepoFilter(filters);
      if (!where) return { hits: [], nextCursor: null, engine: { name: 'memory' } };
      const page = index.search(
        query,
        where,
        viewer,
        limit,
        after ? { score: Number(after.score), identity: after.identity } : undefined,
        pageOptions?.draw,
      );
      const last = page.hits[page.hits.length - 1];
      return {
        hits: page.hits.map((h) => h.hit),
        // A cursor costs a hash and an encoding: skipped for callers that read one page (suggestions).
        nextCursor:
          page.more && last && !pageOptions?.noCursor
            ? searchCursor('memory', query, filters, {
                score: String(last.score),
                identity: last.hit.identity,
              })
            : null,
        engine: { name: 'memory' },
        corrected: page.corrected,
        ignored: page.ignored,
      };
    },
    async index() {
      await sync();
    },
    async remove() {
      await sync();
    },
    async health() {
      const f = await fallback.health();
      if (index) return { ok: true, detail: `${index.size} documents in memory` };
      if (!f.ok) return f;
      return {
        ok: true,
        detail: follower.error
          ? `in-memory index off (${follower.error}), answering from ${fallback.name}`
          : `building the in-memory index (${loading} skills loaded), answering from ${fallback.name}`,
      };
    },
    status() {
      const { documents, vocabulary, postings } = index?.stats() ?? {
        documents: 0,
        vocabulary: 0,
        postings: 0,
      };
      return {
        ready: index !== null,
        documents,
        vocabulary,
        postings,
        bytes: index ? estimateBytes(index) : 0,
        buildSeconds,
        restoreSeconds: snapshots.restoreSeconds,
        loading,
        ...(follower.error ? { error: follower.error } : {}),
      };
    },
    build,
    sync,
    noteLocalWrite() {
      follower.dirty = true;
    },
    noteUsesWritten() {
      usesDirty = true;
    },
    start(watchChanges) {
      follower.start(watchChanges);
    },
    firstBuild: () => follower.firstBuild,
    firstServes: () => Promise.race([serves, follower.firstBuild]),
    storedSnapshotUsable: () => snapshots.storedUsable(),
    async close() {
      await follower.close();
      await fallback.close?.();
    },
  };
}
