/**
 * GitHub's search serves at most 1,000 results per query, however many match (`total_count` says how
 * many did). To reach every match, a query is split on a numeric qualifier (file `size:` for code search,
 * `stars:` for repository search) into ranges, halving each range whose total is over the cap or whose
 * answer was incomplete (GitHub's search timed out), recursively, until every part can be paged through
 * whole. Hand-written: no maintained library splits GitHub searches.
 */

/** One page of a search. */
export interface SearchPage {
  /** `total_count`: how many results match the query (not how many can be paged to). */
  total: number;
  /** `incomplete_results`: the search timed out and this page may miss results. */
  incomplete: boolean;
  /** The repositories (`owner/name`) of the page's results. */
  names: string[];
  /** Results on this page (a short page is the last one). */
  count: number;
}

/** Fetches page `page` (1-based, `perPage` results) of query `q`. */
export type SearchPageFn = (q: string, page: number, perPage: number) => Promise<SearchPage>;

export interface SplitSearchResult {
  names: Set<string>;
  /** Queries that were paged through (the parts). */
  parts: string[];
  /** Parts that stayed over the cap or incomplete at a single value: some of their results may be missing. */
  truncated: string[];
  /** Requests made. */
  requests: number;
}

export interface SplitSearchOptions {
  /** The qualifier to split on and its inclusive range. */
  qualifier: 'size' | 'stars';
  min: number;
  max: number;
  /** Results a query can reach (GitHub: 1,000). */
  cap?: number;
  perPage?: number;
}

/**
 * Every repository the query matches, split on `qualifier` until each part is under the cap. Values above
 * `max` are queried as one last part (`qualifier:>max`), so nothing falls outside the ranges.
 */
export async function splitSearch(
  search: SearchPageFn,
  base: string,
  options: SplitSearchOptions,
): Promise<SplitSearchResult> {
  const cap = options.cap ?? 1000;
  const perPage = options.perPage ?? 100;
  const result: SplitSearchResult = { names: new Set(), parts: [], truncated: [], requests: 0 };
  const page = async (q: string, n: number) => {
    result.requests++;
    return search(q, n, perPage);
  };

  /** Pages through a query that fits; false when a page came back incomplete. */
  async function collect(q: string, first: SearchPage): Promise<boolean> {
    let complete = !first.incomplete;
    for (const name of first.names) result.names.add(name);
    const reachable = Math.min(first.total, cap);
    for (let n = 2, seen = first.count; seen < reachable && first.count === perPage; n++) {
      const next = await page(q, n);
      for (const name of next.names) result.names.add(name);
      complete &&= !next.incomplete;
      seen += next.count;
      if (next.count < perPage) break;
    }
    return complete;
  }

  async function part(lo: number, hi: number | null, retried = false): Promise<void> {
    const range = hi === null ? `>${lo - 1}` : lo === hi ? String(lo) : `${lo}..${hi}`;
    const q = `${base} ${options.qualifier}:${range}`;
    const first = await page(q, 1);
    const splittable = hi !== null && hi > lo;
    if (first.total <= cap && !first.incomplete) {
      result.parts.push(q);
      if (await collect(q, first)) return;
      // A later page timed out: smaller parts are faster, so split (or try once more when it cannot be).
      if (!splittable && retried) {
        result.truncated.push(q);
        return;
      }
    }
    if (splittable) {
      const mid = Math.floor((lo + hi) / 2);
      await part(lo, mid);
      await part(mid + 1, hi);
      return;
    }
    if (first.incomplete && !retried) return part(lo, hi, true);
    // A single value over the cap (or `>max`): take what can be reached and say so.
    result.parts.push(q);
    await collect(q, first);
    result.truncated.push(q);
  }

  await part(options.min, options.max);
  await part(options.max + 1, null);
  return result;
}
