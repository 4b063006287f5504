import type { SearchDocumentRow } from '@atskills/db';
import MiniSearch from 'minisearch';

/**
 * The BM25 baseline of issue 12: MiniSearch (BM25+) with fuzzy and prefix matching over name, description
 * and body, default settings otherwise, over the same live skills the hub serves.
 */
export function createBaseline(rows: SearchDocumentRow[]) {
  const mini = new MiniSearch<{ id: string; name: string; description: string; body: string }>({
    fields: ['name', 'description', 'body'],
    storeFields: [],
    searchOptions: { fuzzy: 0.2, prefix: true },
  });
  mini.addAll(rows.map((r) => ({ id: r.identity, name: r.name, description: r.description, body: r.body })));
  return {
    search(q: string, limit: number): string[] {
      return mini
        .search(q)
        .slice(0, limit)
        .map((r) => String(r.id));
    },
  };
}
