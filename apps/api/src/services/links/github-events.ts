import {
  type Database,
  type LinkWithNames,
  linksOfInstallation,
  linksOfRepository,
  recordLinkFailure,
  renameLinkedRepository,
} from '@atskills/db';
import { z } from 'zod';
import { enqueueLinkIndex, type LinkIndexQueue } from './links.js';

/** The parts of GitHub's webhook payloads the links read (the rest is ignored). */
const Repository = z.object({
  id: z.number(),
  name: z.string(),
  full_name: z.string(),
  owner: z.object({ login: z.string().optional(), name: z.string().optional() }).passthrough(),
  default_branch: z.string().optional(),
  master_branch: z.string().optional(),
});
const RepositoryRef = z.object({ id: z.number(), name: z.string(), full_name: z.string() });
const Installation = z.object({ id: z.number() }).passthrough();

const PushEvent = z.object({ ref: z.string(), repository: Repository });
const RepositoryEvent = z.object({ action: z.string(), repository: Repository });
const InstallationEvent = z.object({
  action: z.string(),
  installation: Installation,
  repositories: z.array(RepositoryRef).optional(),
});
const InstallationRepositoriesEvent = z.object({
  action: z.enum(['added', 'removed']),
  installation: Installation,
  repositories_added: z.array(RepositoryRef).default([]),
  repositories_removed: z.array(RepositoryRef).default([]),
});

/** What the event did to links: how many it re-indexes and how many it marked failed. */
export interface LinkEventOutcome {
  reindexed: number;
  failed: number;
}

/** Who handles a verified delivery. */
export interface LinkEventDeps {
  db: Database;
  queue: LinkIndexQueue | null;
  now: Date;
  requestId: string;
}

const NONE: LinkEventOutcome = { reindexed: 0, failed: 0 };

function ownerOf(repo: z.infer<typeof Repository>): string {
  return repo.owner.login ?? repo.owner.name ?? repo.full_name.split('/')[0] ?? '';
}

function split(fullName: string): { owner: string; name: string } {
  const [owner = '', name = ''] = fullName.split('/');
  return { owner, name };
}

/**
 * Keeps linked collections current from GitHub App webhook deliveries (already verified by the webhook
 * route): a push to the default branch, repositories added to an installation, an unsuspended
 * installation, a renamed, transferred, privatized or publicized repository re-index the links concerned;
 * a deleted or suspended installation, repositories removed from it and a deleted repository fail them
 * (members keep the last good revision, marked stale; owners are told in the audit log).
 * Events that concern no link do nothing.
 */
export async function handleLinkEvent(
  deps: LinkEventDeps,
  event: string,
  payload: unknown,
): Promise<LinkEventOutcome> {
  switch (event) {
    case 'push': {
      const push = PushEvent.safeParse(payload);
      if (!push.success) return NONE;
      const repo = push.data.repository;
      const branch = repo.default_branch ?? repo.master_branch;
      if (branch && push.data.ref !== `refs/heads/${branch}`) return NONE;
      return reindex(
        deps,
        following(await linksOfRepository(deps.db, { owner: ownerOf(repo), name: repo.name, id: repo.id })),
      );
    }
    case 'repository': {
      const parsed = RepositoryEvent.safeParse(payload);
      if (!parsed.success) return NONE;
      const { action, repository: repo } = parsed.data;
      if (action === 'renamed' || action === 'transferred') {
        // The link keeps its collection; its identities do not change with the repository's name.
        await renameLinkedRepository(deps.db, repo.id, { owner: ownerOf(repo), name: repo.name });
      }
      const links = following(
        await linksOfRepository(deps.db, { owner: ownerOf(repo), name: repo.name, id: repo.id }),
      );
      if (action === 'deleted') {
        return fail(deps, links, 'repository-not-found', `GitHub says ${repo.full_name} was deleted.`);
      }
      if (['renamed', 'transferred', 'privatized', 'publicized', 'edited'].includes(action))
        return reindex(deps, links);
      return NONE;
    }
    case 'installation': {
      const parsed = InstallationEvent.safeParse(payload);
      if (!parsed.success) return NONE;
      const { action, installation } = parsed.data;
      if (action === 'deleted') {
        return fail(
          deps,
          await linksOfInstallation(deps.db, installation.id),
          'installation-revoked',
          'The GitHub App was uninstalled.',
        );
      }
      if (action === 'suspend') {
        return fail(
          deps,
          await linksOfInstallation(deps.db, installation.id),
          'installation-suspended',
          'The GitHub App installation was suspended.',
        );
      }
      if (action === 'unsuspend') return reindex(deps, await linksOfInstallation(deps.db, installation.id));
      if (action === 'created')
        return reindex(deps, await appLinksOf(deps.db, parsed.data.repositories ?? []));
      return NONE;
    }
    case 'installation_repositories': {
      const parsed = InstallationRepositoriesEvent.safeParse(payload);
      if (!parsed.success) return NONE;
      const { installation } = parsed.data;
      const removed = new Set(parsed.data.repositories_removed.map((r) => r.full_name.toLowerCase()));
      const lost = (await linksOfInstallation(deps.db, installation.id)).filter((l) =>
        removed.has(`${l.githubOwner}/${l.githubRepo}`.toLowerCase()),
      );
      const failed = await fail(
        deps,
        lost,
        'app-not-installed',
        'The repository was removed from the GitHub App installation.',
      );
      const added = await reindex(deps, await appLinksOf(deps.db, parsed.data.repositories_added));
      return { reindexed: added.reindexed, failed: failed.failed };
    }
    default:
      return NONE;
  }
}

/**
 * The links a repository's pushes and changes concern: token links, and App links the repository's marker
 * file allowed (they hold its id from then on). An App link it never allowed does not follow the
 * repository: another team that named someone else's repository learns nothing of its pushes or renames.
 */
function following(links: LinkWithNames[]): LinkWithNames[] {
  return links.filter((l) => l.credential !== 'app' || l.githubRepoId !== null);
}

/** App links of some repositories (they may have failed for want of an installation). */
async function appLinksOf(db: Database, repos: z.infer<typeof RepositoryRef>[]): Promise<LinkWithNames[]> {
  const out: LinkWithNames[] = [];
  for (const r of repos) {
    for (const l of await linksOfRepository(db, { ...split(r.full_name), id: r.id })) {
      if (l.credential === 'app') out.push(l);
    }
  }
  return out;
}

async function reindex(deps: LinkEventDeps, links: LinkWithNames[]): Promise<LinkEventOutcome> {
  for (const l of links) await enqueueLinkIndex(deps.queue, l.id, { requestId: deps.requestId });
  return { reindexed: links.length, failed: 0 };
}

async function fail(
  deps: LinkEventDeps,
  links: LinkWithNames[],
  code: string,
  message: string,
): Promise<LinkEventOutcome> {
  let failed = 0;
  for (const l of links) {
    if (await recordLinkFailure(deps.db, l, { code, message, at: deps.now, requestId: deps.requestId }))
      failed++;
  }
  return { reindexed: 0, failed };
}
