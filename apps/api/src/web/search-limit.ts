import { SearchQuery, SuggestQuery } from '@atskills/protocol';

/**
 * The search page's `limit`, read by the rule GET /v1/search reads it by (a whole number from 1 to 100,
 * 20 when absent). A bad one was clamped or dropped without a word: `limit=0` showed one result and a Next
 * link, `limit=abc` twenty; the page now says it is wrong, as the API's 400 does.
 */
export function readSearchLimit(raw: string | undefined): { limit: number; error?: string } {
  const parsed = SearchQuery.shape.limit.safeParse(raw);
  if (parsed.success) return { limit: parsed.data };
  return {
    limit: SearchQuery.shape.limit.parse(undefined),
    error: `The limit "${String(raw).slice(0, 20)}" is not a whole number from 1 to 100; leave it out for 20 results a page.`,
  };
}

/**
 * The suggest page's `limit`, read by GET /v1/suggest's rule (a whole number from 1 to 10, 5 when absent);
 * a bad one is named on the page, as on the search page, instead of being clamped without a word.
 */
export function readSuggestLimit(raw: string | undefined): { limit: number; error?: string } {
  const parsed = SuggestQuery.shape.limit.safeParse(raw);
  if (parsed.success) return { limit: parsed.data };
  return {
    limit: SuggestQuery.shape.limit.parse(undefined),
    error: `The limit "${String(raw).slice(0, 20)}" is not a whole number from 1 to 10; leave it out for 5 suggestions.`,
  };
}
