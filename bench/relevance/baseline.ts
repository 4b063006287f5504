import type { SearchDocumentRow } from '@atskills/db';
import MiniSearch from 'minisearch';

/**
 * The BM25 baseline of issue 12: MiniSearch (BM25+) over name, description and body, default settings
 * otherwise, over the same live skills the hub serves. For queries it matches fuzzily and by prefix (what
 * a search box needs); `plain` turns both off, which is how a whole agent message is best served by BM25
 * (every word of a long message expanded by prefix and typo distance drowns the words that matter).
 */
export function createBaseline(rows: SearchDocumentRow[], options: { plain?: boolean } = {}) {
  const mini = new MiniSearch<{ id: string; name: string; description: string; body: string }>({
    fields: ['name', 'description', 'body'],
    storeFields: [],
    searchOptions: options.plain ? {} : { fuzzy: 0.2, prefix: true },
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
