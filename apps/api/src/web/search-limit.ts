import { SearchQuery } from '@atskills/protocol';

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
