import { SearchQuery, SuggestQuery } from '@atskills/protocol';
import type { z } from 'zod';

/**
 * A page's `limit`, read by the rule of the API route it shows (`schema`, its default when absent). A bad one
 * was clamped or dropped without a word (`limit=0` showed one result and a Next link, `limit=abc` twenty);
 * the page now says it is wrong, as the API's 400 does, with `range` and `leftOut` (what leaving it out gives).
 */
function readPageLimit(
  schema: z.ZodType<number, unknown>,
  raw: string | undefined,
  range: string,
  leftOut: string,
): { limit: number; error?: string } {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { limit: parsed.data };
  return {
    limit: schema.parse(undefined),
    error: `The limit "${String(raw).slice(0, 20)}" is not a whole number from ${range}; leave it out for ${leftOut}.`,
  };
}

/** The search page's `limit`, as GET /v1/search reads it (1 to 100, 20 when absent). */
export function readSearchLimit(raw: string | undefined): { limit: number; error?: string } {
  return readPageLimit(SearchQuery.shape.limit, raw, '1 to 100', '20 results a page');
}

/** The suggest page's `limit`, as GET /v1/suggest reads it (1 to 10, 5 when absent). */
export function readSuggestLimit(raw: string | undefined): { limit: number; error?: string } {
  return readPageLimit(SuggestQuery.shape.limit, raw, '1 to 10', '5 suggestions');
}
