import type { Database } from '@atskills/db';
import { markRepositoryUnavailable, moveRepository } from '@atskills/db';
import { isValidGithubRepositoryName } from '@atskills/protocol';
import type { SearchEngine } from '../../search/engine.js';
import type { IndexRequests } from '../indexing/index-requests.js';
import type { WebhookDelivery, WebhookDispatcher, WebhookResult } from './dispatcher.js';

interface RepositoryPayload {
  name?: string;
  full_name?: string;
  private?: boolean;
  default_branch?: string;
  owner?: { login?: string };
}

const ignored = (detail: string, repository?: string): WebhookResult => ({
  outcome: 'ignored',
  detail,
  ...(repository ? { repository } : {}),
});

/** owner/name of the payload's repository, checked with GitHub's name rules (undefined when absent or bad). */
function repositoryOf(
  payload: Record<string, unknown>,
): { owner: string; repo: string; raw: RepositoryPayload } | undefined {
  const raw = payload.repository as RepositoryPayload | undefined;
  if (!raw || typeof raw.full_name !== 'string') return undefined;
  if (!isValidGithubRepositoryName(raw.full_name)) return undefined;
  const [owner = '', repo = ''] = raw.full_name.split('/');
  return { owner, repo, raw };
}

/** The repository's previous owner/name from a `renamed` or `transferred` delivery. */
function previousName(
  action: string,
  payload: Record<string, unknown>,
  current: { owner: string; repo: string },
): { owner: string; repo: string } | undefined {
  const changes = payload.changes as
    | {
        repository?: { name?: { from?: string } };
        owner?: { from?: { user?: { login?: string }; organization?: { login?: string } } };
      }
    | undefined;
  if (action === 'renamed') {
    const from = changes?.repository?.name?.from;
    return typeof from === 'string' ? { owner: current.owner, repo: from } : undefined;
  }
  const from = changes?.owner?.from?.organization?.login ?? changes?.owner?.from?.user?.login;
  return typeof from === 'string' ? { owner: from, repo: current.repo } : undefined;
}

/**
 * The public-repository events: `push` to the default branch re-crawls the repository (through an index
 * request, so a burst of pushes is one crawl at a time); `repository` renamed / transferred move its
 * skills to the new identities; deleted / privatized take them out of search; publicized indexes it.
 */
export function registerGithubEvents(
  dispatcher: WebhookDispatcher,
  deps: { db: Database; indexRequests: IndexRequests; search: SearchEngine },
): void {
  dispatcher.on('ping', async () => ({ outcome: 'ignored', detail: 'pong' }));

  dispatcher.on('push', async (delivery: WebhookDelivery) => {
    const repo = repositoryOf(delivery.payload);
    if (!repo) return ignored('The delivery names no valid repository.');
    const fullName = `${repo.owner}/${repo.repo}`;
    if (repo.raw.private)
      return ignored('Private repositories are indexed only through a linked team.', fullName);
    const ref = delivery.payload.ref;
    const branch = repo.raw.default_branch;
    if (delivery.payload.deleted === true || typeof branch !== 'string' || ref !== `refs/heads/${branch}`) {
      return ignored(`Only pushes to the default branch (${branch ?? 'unknown'}) are indexed.`, fullName);
    }
    const accepted = await deps.indexRequests.request(repo.owner, repo.repo, 'webhook', {
      requestId: delivery.requestId,
    });
    return {
      outcome: 'queued',
      detail: accepted.started ? 'Re-crawl queued.' : 'A crawl of this repository is already queued.',
      repository: accepted.repo,
      statusUrl: accepted.statusUrl,
    };
  });

  dispatcher.on('repository', async (delivery: WebhookDelivery) => {
    const repo = repositoryOf(delivery.payload);
    if (!repo) return ignored('The delivery names no valid repository.');
    const fullName = `${repo.owner}/${repo.repo}`;
    const action = delivery.action ?? '';
    if (action === 'renamed' || action === 'transferred') {
      const from = previousName(action, delivery.payload, repo);
      if (!from) return ignored(`The ${action} delivery does not say the previous name.`, fullName);
      const moved = await moveRepository(
        deps.db,
        { owner: from.owner, name: from.repo },
        {
          owner: repo.owner,
          name: repo.repo,
          githubId: Number((delivery.payload.repository as { id?: number }).id) || null,
        },
      );
      if (!moved.moved) return ignored(`The hub does not know ${from.owner}/${from.repo}.`, fullName);
      await deps.search.remove(moved.identities.map((m) => m.from));
      await deps.search.index(moved.identities.map((m) => m.to));
      return {
        outcome: 'applied',
        detail: `Moved ${moved.identities.length} skills from ${from.owner}/${from.repo}.`,
        repository: fullName,
      };
    }
    if (action === 'deleted' || action === 'privatized') {
      const done = await markRepositoryUnavailable(deps.db, repo.owner, repo.repo, {
        path: '',
        code: action === 'deleted' ? 'repository-deleted' : 'repository-private',
        message:
          action === 'deleted'
            ? 'The repository was deleted on GitHub.'
            : 'The repository was made private on GitHub; its skills left the public index.',
      });
      if (!done.found) return ignored(`The hub does not know ${fullName}.`, fullName);
      await deps.search.remove(done.identities);
      return {
        outcome: 'applied',
        detail: `${done.identities.length} skills left search.`,
        repository: fullName,
      };
    }
    if (action === 'publicized') {
      const accepted = await deps.indexRequests.request(repo.owner, repo.repo, 'webhook', {
        requestId: delivery.requestId,
      });
      return {
        outcome: 'queued',
        detail: 'Indexing queued.',
        repository: accepted.repo,
        statusUrl: accepted.statusUrl,
      };
    }
    return ignored(`The hub does not act on repository "${action}".`, fullName);
  });
}
