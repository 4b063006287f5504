import { formatIdentity } from '@atskills/protocol';
import type { Database, Executor } from '../client.js';
import type { RepositoryProblem } from '../schema/repositories.js';
import { deleteEmptyRequestRuns } from './crawls.js';
import { deleteClosedIndexRequests, deleteRedirectFrom, insertRedirect } from './indexing.js';
import {
  deleteOtherRepositoriesNamed,
  deleteRepositoryRow,
  deleteUnfoundRepositories,
  findOtherRepositoryNamed,
  findOtherRepositoryWithGithubId,
  lockRepositories,
  lockRepositoryNamed,
  recordRepositoryUnavailable,
  renameRepositoryRow,
  repositoriesOfMove,
} from './repositories.js';
import { countRepositorySkills, markRepositorySkillsGone, renameRepositorySkills } from './skills/gh.js';

// A repository's lifecycle upstream, each a transaction over several table families: renamed or
// transferred (the row, its skills' identities and the redirects), deleted or made private (the row and
// its skills), and forgotten when it never existed (the row, its requests and their runs). The SQL of each
// step is in its family's file; here are the steps and their order.

/** What a move did: whether a row took the new name, the rows merged away, the identities that moved. */
export interface RepositoryMove {
  moved: boolean;
  /** Repository rows deleted because they were the same repository (an empty shell, or a duplicate by id). */
  merged: number;
  identities: { from: string; to: string }[];
}

/**
 * Moves a renamed or transferred repository to owner/name in one transaction: the row, its skills (with
 * their revisions, which hang off the skill ids, and their popularity) get the new identities, and the
 * old name redirects. A row already made for the new name (crawled before the move was noticed) gives way
 * to the moved one, which carries the history. With GitHub's id, every other row holding it (the same
 * repository crawled under another name) is merged into the one at the new name the same way, so one
 * repository never has two rows. A row that gives way hands its crawl reports and redirects to the one
 * that stays. `moved` is false when no row took a new name.
 */
export async function moveRepository(
  db: Database,
  from: { owner: string; name: string },
  to: { owner: string; name: string; githubId?: number | null },
): Promise<RepositoryMove> {
  return db.transaction(async (tx) => {
    // Every row the move may touch, locked in id order before any is rewritten: two jobs of one repository
    // under different names merge at the same time, and rows locked as they came deadlocked.
    await lockRepositories(tx, await repositoriesOfMove(tx, from, to));
    const result: RepositoryMove = { moved: false, merged: 0, identities: [] };
    await moveRow(tx, from, to, result);
    // Each step leaves one row fewer holding the id away from the new name; the bound is only a guard.
    for (let step = 0; to.githubId && step < MAX_MERGES; step++) {
      const atTarget = await lockRepositoryNamed(tx, to.owner, to.name);
      const other = await findOtherRepositoryWithGithubId(tx, to.githubId, atTarget?.id ?? 0);
      if (!other) break;
      await moveRow(tx, other, to, result);
    }
    return result;
  });
}

/** The most rows of one GitHub id a move merges (one repository crawled under more names than this is not). */
const MAX_MERGES = 16;

/** One step of moveRepository: the row at `from` takes the name `to` (or gives way to the row there). */
async function moveRow(
  tx: Executor,
  from: { owner: string; name: string },
  to: { owner: string; name: string; githubId?: number | null },
  result: RepositoryMove,
): Promise<void> {
  const repo = await lockRepositoryNamed(tx, from.owner, from.name);
  if (!repo) return;
  if (repo.owner === to.owner && repo.name === to.name) return;
  const target = await findOtherRepositoryNamed(tx, to.owner, to.name, repo.id);
  if (target !== undefined && (await countRepositorySkills(tx, repo.id)) === 0) {
    // The old name's row is an empty shell (a crawl of the old name made it): the row at the new name
    // is the repository; the shell goes and the old name redirects there.
    await deleteRepositoryRow(tx, repo.id, target);
    await insertRedirect(
      tx,
      { oldOwner: repo.owner, oldName: repo.name, repositoryId: target },
      { ifAbsent: true },
    );
    result.merged++;
    return;
  }
  const sameName =
    repo.owner.toLowerCase() === to.owner.toLowerCase() && repo.name.toLowerCase() === to.name.toLowerCase();
  // The row at the new name gives way before this one takes the name (the unique index on it).
  if (!sameName && target !== undefined) {
    await deleteOtherRepositoriesNamed(tx, to.owner, to.name, repo.id);
    result.merged++;
  }
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
  result.identities.push(...identities);
  if (!sameName) {
    // A repository lives at the new name now: an older redirect from it no longer applies; the old name's
    // redirect is (re)pointed at this repository.
    for (const gone of [to, repo]) await deleteRedirectFrom(tx, gone.owner, gone.name);
    await insertRedirect(tx, { oldOwner: repo.owner, oldName: repo.name, repositoryId: repo.id });
  }
  result.moved = true;
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
