/**
 * The bodies Meilisearch's vector search needs when the hub has an embeddings service (EMBEDDINGS_URL): the
 * user-provided embedder of the index settings, the `_vectors` of each skill document, and the hybrid search
 * a suggestion's semantic list comes from. Pure functions, so the shapes are tested without a server.
 */

/** The embedder's name in the index settings and in each document's `_vectors`. */
export const MEILI_EMBEDDER = 'atskills';

/**
 * Share of the hybrid search given to the vector side. 1: the suggestion engine fuses its own lexical list
 * already, so a mixed list would count the same lexical evidence twice.
 */
export const SEMANTIC_RATIO = 1;

/** The settings patch declaring the user-provided embedder (the hub computes every vector itself). */
export function embedderSettings(dimensions: number): {
  embedders: Record<string, { source: 'userProvided'; dimensions: number }>;
} {
  return { embedders: { [MEILI_EMBEDDER]: { source: 'userProvided', dimensions } } };
}

/** The embedder's dimensions as read back from the index settings, or null when the index has none. */
export function embedderDimensions(settings: { embedders?: Record<string, unknown> | null }): number | null {
  const embedder = settings.embedders?.[MEILI_EMBEDDER] as
    | { source?: string; dimensions?: unknown }
    | null
    | undefined;
  if (embedder?.source !== 'userProvided') return null;
  const dims = embedder.dimensions;
  return typeof dims === 'number' && Number.isInteger(dims) && dims > 0 ? dims : null;
}

/**
 * A document with its vector under `_vectors`; without a vector of the index's dimensions the document is
 * sent without one (Meilisearch then leaves it out of vector search instead of rejecting the batch).
 */
export function withVector<T extends object>(
  doc: T,
  vector: ArrayLike<number> | undefined,
  dimensions: number,
): T & { _vectors?: Record<string, number[]> } {
  if (!vector || vector.length !== dimensions) return doc;
  return { ...doc, _vectors: { [MEILI_EMBEDDER]: Array.from(vector) } };
}

/**
 * The search body of a hybrid search by a vector: skills only (folders have no vector), filtered as any
 * search, identities only (the suggestion engine holds the rest).
 */
export function hybridSearchBody(
  vector: ArrayLike<number>,
  filter: string[],
  limit: number,
  semanticRatio = SEMANTIC_RATIO,
): {
  vector: number[];
  hybrid: { embedder: string; semanticRatio: number };
  filter: string[];
  limit: number;
  attributesToRetrieve: string[];
} {
  return {
    vector: Array.from(vector),
    hybrid: { embedder: MEILI_EMBEDDER, semanticRatio },
    filter: [...filter, 'kind = "skill"'],
    limit,
    attributesToRetrieve: ['identity'],
  };
}
