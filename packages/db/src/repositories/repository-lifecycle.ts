import { formatIdentity } from '@atskills/protocol';
import type { Database } from '../client.js';
import type { RepositoryProblem } from '../schema/repositories.js';
import { deleteEmptyRequestRuns } from './crawls.js';
import { deleteClosedIndexRequests, deleteRedirectFrom, insertRedirect } from './indexing.js';
import {
  deleteOtherRepositoriesNamed,
  deleteRepositoryRow,
  deleteUnfoundRepositories,
  findOtherRepositoryNamed,
  lockRepositoryNamed,
  recordRepositoryUnavailable,
  renameRepositoryRow,
} from './repositories.js';
import { countRepositorySkills, markRepositorySkillsGone, renameRepositorySkills } from './skills/gh.js';

// A repository's lifecycle upstream, each a transaction over several table families: renamed or
// transferred (the row, its skills' identities and the redirects), deleted or made private (the row and
// its skills), and forgotten when it never existed (the row, its requests and their runs). The SQL of each
// step is in its family's file; here are the steps and their order.

/**
 * Moves a renamed or transferred repository to owner/name in one transaction: the row, its skills (with
 * their revisions, which hang off the skill ids, and their popularity) get the new identities, and the
 * old name redirects. A row already made for the new name (crawled before the move was noticed) gives way
 * to the moved one, which carries the history. Returns false when there is nothing to move.
 */
export async function moveRepository(
  db: Database,
  from: { owner: string; name: string },
  to: { owner: string; name: string; githubId?: number | null },
): Promise<{ moved: boolean; identities: { from: string; to: string }[] }> {
  return db.transaction(async (tx) => {
    const repo = await lockRepositoryNamed(tx, from.owner, from.name);
    if (!repo) return { moved: false, identities: [] };
    if (repo.owner === to.owner && repo.name === to.name) return { moved: false, identities: [] };
    const target = await findOtherRepositoryNamed(tx, to.owner, to.name, repo.id);
    if (target !== undefined && (await countRepositorySkills(tx, repo.id)) === 0) {
      // The old name's row is an empty shell (a crawl of the old name made it): the row at the new name
      // is the repository; the shell goes and the old name redirects there.
      await deleteRepositoryRow(tx, repo.id);
      await insertRedirect(
        tx,
        { oldOwner: repo.owner, oldName: repo.name, repositoryId: target },
        { ifAbsent: true },
      );
      return { moved: false, identities: [] };
    }
    const sameName =
      repo.owner.toLowerCase() === to.owner.toLowerCase() &&
      repo.name.toLowerCase() === to.name.toLowerCase();
    // The row at the new name gives way before this one takes the name (the unique index on it).
    if (!sameName) await deleteOtherRepositoriesNamed(tx, to.owner, to.name, repo.id);
    await renameRepositoryRow(tx, repo.id, to);
    const identities = await renameRepositorySkills(
      tx,
      repo.id,
      formatIdentity('gh', `${repo.owner}/${repo.name}`),
      {
        prefix: formatIdentity('gh', `${to.owner}/${to.name}`),
        owner: to.owner,
        name: to.name,
      },
    );
    if (!sameName) {
      // A repository lives at the new name now: an older redirect from it no longer applies; the old name's
      // redirect is (re)pointed at this repository.
      for (const gone of [to, repo]) await deleteRedirectFrom(tx, gone.owner, gone.name);
      await insertRedirect(tx, { oldOwner: repo.owner, oldName: repo.name, repositoryId: repo.id });
    }
    return { moved: true, identities };
  });
}

/**
 * A repository that was deleted or made private upstream: its skills leave search and answer 410, and the
 * status says why. The stored ETag is dropped so a later crawl (e.g. after `publicized`) reads it afresh.
 */
export async function markRepositoryUnavailable(
  db: Database,
  owner: string,
  name: string,
  problem: RepositoryProblem,
): Promise<{ found: boolean; identities: string[] }> {
  return db.transaction(async (tx) => {
    const repo = await lockRepositoryNamed(tx, owner, name);
    if (!repo) return { found: false, identities: [] };
    const now = new Date();
    const identities = await markRepositorySkillsGone(tx, repo.id, [], now);
    await recordRepositoryUnavailable(tx, repo, problem, now);
    return { found: true, identities };
  });
}

/**
 * Forgets what index requests for names that never held anything left behind once the not-found answer
 * is older than `ttlSeconds`: the repository row (its crawl reports go with it), its closed index
 * requests, and the request runs left without a report. A made-up name thus leaves no permanent row.
 */
export async function pruneUnfoundRepositories(db: Database, ttlSeconds: number): Promise<number> {
  return db.transaction(async (tx) => {
    const gone = await deleteUnfoundRepositories(tx, ttlSeconds);
    for (const { owner, name } of gone) await deleteClosedIndexRequests(tx, owner, name);
    // Runs last: a run is empty only once the reports of the deleted rows went with them.
    if (gone.length > 0) await deleteEmptyRequestRuns(tx, ttlSeconds);
    return gone.length;
  });
}
