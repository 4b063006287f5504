import { and, asc, eq, gt, isNull, type SQL } from 'drizzle-orm';
import type { Database } from '../client.js';
import { skills } from '../schema/skills.js';
import { type ReadScope, visibleTo } from './read-scope.js';

/** A live hub skill as the discovery index and the MCP skills extension list it. */
export interface HubSkillEntry {
  identity: string;
  owner: string;
  container: string;
  path: string;
  revision: string;
  name: string;
  description: string;
  frontmatter: Record<string, unknown>;
  files: (typeof skills.$inferSelect)['files'];
  flags: (typeof skills.$inferSelect)['flags'];
}

/**
 * Live `hub:` skills that parsed, which the scope may read, ordered by identity: at most `limit` after the
 * identity `after` (a keyset page), optionally of one namespace and collection.
 */
export async function listHubSkillEntries(
  db: Database,
  scope: ReadScope,
  options: { after?: string; limit: number; namespace?: string; collection?: string },
): Promise<HubSkillEntry[]> {
  const where: (SQL | undefined)[] = [
    eq(skills.source, 'hub'),
    isNull(skills.goneAt),
    isNull(skills.parseError),
    visibleTo(scope, skills.visibility, skills.owner),
  ];
  if (options.after !== undefined) where.push(gt(skills.identity, options.after));
  if (options.namespace !== undefined) where.push(eq(skills.owner, options.namespace.toLowerCase()));
  if (options.collection !== undefined) where.push(eq(skills.container, options.collection.toLowerCase()));
  return db
    .select({
      identity: skills.identity,
      owner: skills.owner,
      container: skills.container,
      path: skills.path,
      revision: skills.revision,
      name: skills.name,
      description: skills.description,
      frontmatter: skills.frontmatter,
      files: skills.files,
      flags: skills.flags,
    })
    .from(skills)
    .where(and(...where))
    .orderBy(asc(skills.identity))
    .limit(options.limit);
}
