import { type AnyColumn, getTableName, type SQL, sql } from 'drizzle-orm';

/**
 * A column as `"table"."column"`, for the outer row named inside a correlated subquery of a RETURNING
 * list. Drizzle writes RETURNING columns unqualified, and an unqualified name inside a subquery binds to
 * the subquery's own table when it has a column of that name: `exists (select 1 from crawl_reports where
 * repository_id = "id")` compares a report with its own id, not the updated repository's.
 */
export function qualified(column: AnyColumn): SQL {
  return sql`${sql.identifier(getTableName(column.table))}.${sql.identifier(column.name)}`;
}
