import { and, type SQL, sql } from 'drizzle-orm';
import { repositories } from '../schema/repositories.js';

/**
 * The repository named owner/name. GitHub names are case-insensitive; this matches the
 * `repositories_full_name_key` index on (lower(owner), lower(name)).
 */
export function repositoryNamed(owner: string, name: string): SQL {
  return and(
    sql`lower(${repositories.owner}) = lower(${owner})`,
    sql`lower(${repositories.name}) = lower(${name})`,
  ) as SQL;
}
