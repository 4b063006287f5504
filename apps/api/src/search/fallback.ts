import type { SearchEngine } from './engine.js';

/**
 * Wraps a primary engine (Meilisearch) with a fallback (Postgres): when the primary fails, the same
 * search is answered by the fallback and the page says so (`engine: 'postgres; fallback'`, sent as
 * the X-Search-Engine header). Index/remove go to the primary only; Postgres needs no upkeep.
 */
export function createFallbackEngine(
  primary: SearchEngine,
  fallback: SearchEngine,
  onFallback: (err: unknown) => void = () => {},
): SearchEngine {
  return {
    name: primary.name,
    async search(query, filters, viewer, limit, cursor) {
      try {
        return await primary.search(query, filters, viewer, limit, cursor);
      } catch (err) {
        // A malformed cursor is the caller's fault, not an outage; cursors of one engine do not fit the other.
        if ((err as { code?: unknown }).code === 'bad-cursor') throw err;
        onFallback(err);
        const page = await fallback.search(
          query,
          filters,
          viewer,
          limit,
          cursor?.length ? cursor : undefined,
        );
        return { ...page, engine: `${fallback.name}; fallback` };
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
