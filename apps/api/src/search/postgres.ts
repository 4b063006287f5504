import { type Database, type ReadScope, searchSkills } from '@atskills/db';
import { readSearchCursor, searchCursor } from './cursor.js';
import { type SearchEngine, type SearchFilters, type SearchPage, splitRepoFilter } from './engine.js';
import { hitFromRow } from './hits.js';
import { planWords } from './relevance/analyze.js';

/**
 * The Postgres engine: full-text search on the generated `skills.search` column plus pg_trgm on names,
 * with the shared query plan (stop words out, synonyms in, a skill need not hold every word). The index is
 * the table itself, so index/remove have nothing to do.
 */
export function createPostgresEngine(db: Database): SearchEngine {
  return {
    name: 'postgres',
    async search(query: string, filters: SearchFilters, viewer: ReadScope, limit: number, cursor?: string) {
      const after = cursor ? readSearchCursor('postgres', query, filters, cursor) : undefined;
      const plan = planWords(query);
      // The database compares `repo` to the bare name: an `owner/name` one is split here.
      const where = splitRepoFilter(filters);
      // One extra row tells whether there is a next page without a count query.
      const rows = where
        ? await searchSkills(db, {
            query,
            terms: plan.words,
            alternatives: plan.alternatives,
            filters: where,
            scope: viewer,
            limit: limit + 1,
            ...(after ? { after } : {}),
          })
        : [];
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      const result: SearchPage = {
        hits: page.map(hitFromRow),
        nextCursor:
          rows.length > limit && last
            ? searchCursor('postgres', query, filters, { score: last.score, identity: last.identity })
            : null,
        engine: { name: 'postgres' },
        corrected: {},
        ignored: plan.ignored,
      };
      return result;
    },
    async index() {},
    async remove() {},
    async health() {
      try {
        await searchSkills(db, {
          query: 'health',
          filters: {},
          scope: { isAdmin: false, readableNamespaces: [] },
          limit: 1,
        });
        return { ok: true };
      } catch (err) {
        return { ok: false, detail: (err as Error).message };
      }
    },
  };
}
