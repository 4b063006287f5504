import type { SearchEngine } from './engine.js';

/** Prefix of cursors issued by the fallback engine ('.' never occurs in a base64url cursor). */
const FALLBACK_CURSOR = 'f.';

/** How often a stale primary is probed to see whether it is back (ms). */
const RECOVERY_PROBE_MS = 1_000;

/** An engine whose index can be rebuilt from Postgres (Meilisearch). */
type RebuildableEngine = SearchEngine & { rebuild?: () => Promise<{ documents: number }> };

/**
 * Wraps a primary engine (Meilisearch) with a fallback (Postgres): when the primary fails, the same
 * search is answered by the fallback and the page says so (`engine: { name: 'postgres', fallback: 'outage' }`,
 * sent as the X-Search-Engine header `postgres; fallback`). Index/remove go to the primary only; Postgres needs no upkeep.
 * Once the primary has failed, its index may have missed updates, so it is marked stale: searches stay on
 * the fallback, the primary is probed at most once a second, and when it answers again its index is
 * rebuilt from Postgres before it serves searches again.
 */
export function createFallbackEngine(
  primary: RebuildableEngine,
  fallback: SearchEngine,
  onFallback: (err: unknown) => void = () => {},
): RebuildableEngine {
  // Pages served by the fallback hand out the fallback's cursors, marked, so the next page goes back to
  // the engine that issued it (the primary cannot read them and would answer 400 bad-cursor).
  const fromFallback = async (...args: Parameters<SearchEngine['search']>) => {
    const page = await fallback.search(...args);
    return {
      ...page,
      nextCursor: page.nextCursor === null ? null : `${FALLBACK_CURSOR}${page.nextCursor}`,
      engine: { name: fallback.name, fallback: 'outage' as const },
    };
  };
  let stale = false;
  let recovering: Promise<void> | null = null;
  let lastProbe = 0;
  const markStale = (err: unknown) => {
    stale = true;
    onFallback(err);
  };
  const recover = () => {
    if (recovering || Date.now() - lastProbe < RECOVERY_PROBE_MS) return;
    lastProbe = Date.now();
    recovering = (async () => {
      const health = await primary.health();
      if (!health.ok) return;
      if (primary.rebuild) await primary.rebuild();
      stale = false;
    })()
      .catch(() => {})
      .finally(() => {
        recovering = null;
      });
  };
  return {
    name: primary.name,
    async search(query, filters, viewer, limit, cursor) {
      if (stale) {
        recover();
        return fromFallback(
          query,
          filters,
          viewer,
          limit,
          cursor?.startsWith(FALLBACK_CURSOR) ? cursor.slice(2) : cursor,
        );
      }
      if (cursor?.startsWith(FALLBACK_CURSOR)) {
        return fromFallback(query, filters, viewer, limit, cursor.slice(FALLBACK_CURSOR.length));
      }
      try {
        return await primary.search(query, filters, viewer, limit, cursor);
      } catch (err) {
        // A malformed cursor is the caller's fault, not an outage; cursors of one engine do not fit the other.
        if ((err as { code?: unknown }).code === 'bad-cursor') throw err;
        markStale(err);
        return fromFallback(query, filters, viewer, limit, cursor?.length ? cursor : undefined);
      }
    },
    // A write the primary misses while it is down is repaired by the rebuild when it returns.
    async index(identities) {
      await primary.index(identities).catch(markStale);
    },
    async remove(identities) {
      await primary.remove(identities).catch(markStale);
    },
    async rebuild() {
      if (!primary.rebuild) return { documents: 0 };
      const result = await primary.rebuild();
      stale = false;
      return result;
    },
    async health() {
      const [p, f] = await Promise.all([primary.health(), fallback.health()]);
      return p.ok
        ? p
        : {
            ok: f.ok,
            detail: `${primary.name} down (${p.detail ?? 'unreachable'}), serving from ${fallback.name}`,
          };
    },
    async close() {
      await primary.close?.();
      await fallback.close?.();
    },
  };
}
