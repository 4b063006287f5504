import type { SearchEngine } from './engine.js';

/**
 * Wraps a primary engine (Meilisearch) with a fallback (Postgres): when the primary fails, the same
 * search is answered by the fallback and the page says so (`engine: 'postgres; fallback'`, sent as
 * the X-Search-Engine header). Index/remove go to the primary only; Postgres needs no upkeep.
 */
/** Prefix of cursors issued by the fallback engine ('.' never occurs in a base64url cursor). */
const FALLBACK_CURSOR = 'f.';

export function createFallbackEngine(
  primary: SearchEngine,
  fallback: SearchEngine,
  onFallback: (err: unknown) => void = () => {},
): SearchEngine {
  // Pages served by the fallback hand out the fallback's cursors, marked, so the next page goes back to
  // the engine that issued it (the primary cannot read them and would answer 400 bad-cursor).
  const fromFallback = async (...args: Parameters<SearchEngine['search']>) => {
    const page = await fallback.search(...args);
    return {
      ...page,
      nextCursor: page.nextCursor === null ? null : `${FALLBACK_CURSOR}${page.nextCursor}`,
      engine: `${fallback.name}; fallback`,
    };
  };
  return {
    name: primary.name,
    async search(query, filters, viewer, limit, cursor) {
      if (cursor?.startsWith(FALLBACK_CURSOR)) {
        return fromFallback(query, filters, viewer, limit, cursor.slice(FALLBACK_CURSOR.length));
      }
      try {
        return await primary.search(query, filters, viewer, limit, cursor);
      } catch (err) {
        // A malformed cursor is the caller's fault, not an outage; cursors of one engine do not fit the other.
        if ((err as { code?: unknown }).code === 'bad-cursor') throw err;
        onFallback(err);
        return fromFallback(query, filters, viewer, limit, cursor?.length ? cursor : undefined);
      }
    },
    async index(identities) {
      await primary.index(identities);
    },
    async remove(identities) {
      await primary.remove(identities);
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
