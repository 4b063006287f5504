import { type SQL, type SQLWrapper, sql } from 'drizzle-orm';

/**
 * What a read query needs to know about the caller: which private namespaces it may read. The API's
 * `Viewer` satisfies this. Admins read everything.
 */
export interface ReadScope {
  isAdmin: boolean;
  readableNamespaces: readonly string[];
}

/** The public-only scope (anonymous callers, background jobs that must not leak private rows). */
export const PUBLIC_SCOPE: ReadScope = Object.freeze({
  isAdmin: false,
  readableNamespaces: Object.freeze([]),
});

/** SQL condition: the row is public, or private in a namespace the scope may read. */
export function visibleTo(scope: ReadScope, visibility: SQLWrapper, owner: SQLWrapper): SQL {
  if (scope.isAdmin) return sql`true`;
  const readable = scope.readableNamespaces.map((n) => n.toLowerCase());
  if (readable.length === 0) return sql`${visibility} = 'public'`;
  return sql`(${visibility} = 'public' or lower(${owner}) = any(${sql.param(readable)}::text[]))`;
}
