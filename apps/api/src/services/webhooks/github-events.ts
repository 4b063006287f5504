import type { Database } from '@atskills/db';
import { repositoryForEvent } from '@atskills/db';
import { isValidGithubRepositoryName } from '@atskills/protocol';
import { isHttpProblem } from '../../problems.js';
import type { SearchEngine } from '../../search/engine.js';
import type { IndexRequests } from '../indexing/index-requests.js';
import type { WebhookDelivery, WebhookDispatcher, WebhookResult } from './dispatcher.js';

/** The quota push deliveries share for repositories the hub never saw (see IndexRequests.request). */
const PUSH_QUOTA_KEY = 'webhook:push';

/** The `repository` actions that may change what the hub serves: each one schedules a check with GitHub. */
const CHECKED_ACTIONS = new Set(['renamed', 'transferred', 'deleted', 'privatized', 'publicized']);

interface RepositoryPayload {
  id?: unknown;
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
 * request, so a burst of pushes is one crawl at a time); `repository` renamed / transferred / deleted /
 * privatized / publicized schedule a check of the repository with GitHub (a crawl that reads it by its
 * numeric id), which moves, removes, hides or indexes its skills only as GitHub's answer says.
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
    // A push is no check of a repository's state: one GitHub called missing or private a moment ago is not
    // asked again, and a name the hub never saw is charged to one quota for every push delivery (whoever
    // holds the shared secret could otherwise spend the hub's GitHub budget on made-up names).
    let accepted: Awaited<ReturnType<IndexRequests['request']>>;
    try {
      accepted = await deps.indexRequests.request(repo.owner, repo.repo, 'webhook', {
        requestId: delivery.requestId,
        caller: PUSH_QUOTA_KEY,
        recheck: false,
      });
    } catch (error) {
      if (isHttpProblem(error) && (error.code === 'not-found' || error.code === 'rate-limited'))
        return ignored(error.detail ?? error.code, fullName);
      throw error;
    }
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
    if (!CHECKED_ACTIONS.has(action))
      return ignored(`The hub does not act on repository "${action}".`, fullName);
    // A delivery is a hint, never the truth (SPEC 2.8): whoever holds the secret can sign any payload. The
    // hub looks up the repository it knows (by GitHub's id, else by the names the delivery gives) and
    // crawls it; the crawl reads it from GitHub by its id and applies only what GitHub answers (a new name
    // moves the skills, 404 takes them out, `private` drops them from the public index, public indexes).
    const id = Number(repo.raw.id);
    const githubId = Number.isSafeInteger(id) && id > 0 ? id : null;
    const from =
      action === 'renamed' || action === 'transferred'
        ? previousName(action, delivery.payload, repo)
        : undefined;
    const known = await repositoryForEvent(deps.db, githubId, [
      { owner: repo.owner, name: repo.repo },
      ...(from ? [{ owner: from.owner, name: from.repo }] : []),
    ]);
    if (!known && action !== 'publicized') return ignored(`The hub does not know ${fullName}.`, fullName);
    const target = known ?? { owner: repo.owner, name: repo.repo };
    const accepted = await deps.indexRequests.request(target.owner, target.name, 'webhook', {
      requestId: delivery.requestId,
    });
    return {
      outcome: 'queued',
      detail: `${action}: ${target.owner}/${target.name} is checked with GitHub${known?.githubId ? ` (repository ${known.githubId})` : ''}; only what GitHub answers is applied.`,
      repository: accepted.repo,
      statusUrl: accepted.statusUrl,
    };
  });
}
