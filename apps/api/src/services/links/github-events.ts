import {
  type Database,
  type LinkWithNames,
  linksOfInstallation,
  linksOfRepository,
  recordLinkFailure,
  renameLinkedRepository,
} from '@atskills/db';
import type { LinkAccess } from '@atskills/github-auth';
import { z } from 'zod';
import { askGithub } from './github-check.js';
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
  /** Asks GitHub, with each link's own credential, what the delivery claims. */
  access: LinkAccess;
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
 * route). A delivery is a hint, never the truth (SPEC 2.8): whoever holds the App's webhook secret can sign
 * any payload. It only picks the links it concerns; what happens to them is what GitHub's API answers to
 * each link's own credential (settle): a push, an installation or repositories added re-index (the index
 * reads GitHub itself); a repository event, a deleted or suspended installation and repositories removed
 * from it ask GitHub about each link's repository by its id: a new name GitHub reports is followed, a
 * repository the credential no longer reads fails the link (members keep the last good revision, marked
 * stale; owners are told in the audit log), and one it still reads is re-indexed.
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
      if (!['renamed', 'transferred', 'deleted', 'privatized', 'publicized', 'edited'].includes(action))
        return NONE;
      const links = following(
        await linksOfRepository(deps.db, { owner: ownerOf(repo), name: repo.name, id: repo.id }),
      );
      // The payload's name is only where an App credential may look (its tokens are minted per repository name).
      const claimed = action === 'renamed' || action === 'transferred' ? repo.name : undefined;
      return settle(deps, links, claimed);
    }
    case 'installation': {
      const parsed = InstallationEvent.safeParse(payload);
      if (!parsed.success) return NONE;
      const { action, installation } = parsed.data;
      if (action === 'deleted' || action === 'suspend')
        return settle(deps, following(await linksOfInstallation(deps.db, installation.id)));
      if (action === 'unsuspend') return reindex(deps, await linksOfInstallation(deps.db, installation.id));
      if (action === 'created')
        return reindex(deps, await appLinksOf(deps.db, parsed.data.repositories ?? []));
      return NONE;
    }
    case 'installation_repositories': {
      const parsed = InstallationRepositoriesEvent.safeParse(payload);
      if (!parsed.success) return NONE;
      const { installation } = parsed.data;
      const removed = parsed.data.repositories_removed;
      const names = new Set(removed.map((r) => r.full_name.toLowerCase()));
      const ids = new Set(removed.map((r) => r.id));
      const named = following(await linksOfInstallation(deps.db, installation.id)).filter(
        (l) =>
          names.has(`${l.githubOwner}/${l.githubRepo}`.toLowerCase()) ||
          (l.githubRepoId !== null && ids.has(l.githubRepoId)),
      );
      const lost = await settle(deps, named);
      const added = await reindex(deps, await appLinksOf(deps.db, parsed.data.repositories_added));
      return { reindexed: lost.reindexed + added.reindexed, failed: lost.failed };
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

/**
 * Applies to each link what GitHub answers its credential about the repository it follows (by id): the
 * name GitHub reports now (the link's repository id never changes here), then an index; or the failure
 * GitHub's answer gives (deleted, uninstalled, suspended, removed from the installation, credential revoked).
 */
async function settle(
  deps: LinkEventDeps,
  links: LinkWithNames[],
  claimedName?: string,
): Promise<LinkEventOutcome> {
  const outcome = { reindexed: 0, failed: 0 };
  for (const link of links) {
    const answer = await askGithub(deps.access, link, claimedName);
    // Nothing GitHub said: the index, which asks GitHub itself, records why it cannot.
    if (answer.kind === 'unasked') {
      outcome.reindexed += (await reindex(deps, [link])).reindexed;
      continue;
    }
    if (answer.kind === 'unreadable') {
      if (
        await recordLinkFailure(deps.db, link, {
          code: answer.code,
          message: answer.message,
          at: deps.now,
          requestId: deps.requestId,
        })
      )
        outcome.failed++;
      continue;
    }
    const current = answer.repository;
    const moved =
      current.owner.toLowerCase() !== link.githubOwner.toLowerCase() ||
      current.name.toLowerCase() !== link.githubRepo.toLowerCase();
    if (moved && link.githubRepoId !== null) {
      await renameLinkedRepository(deps.db, link.id, link.githubRepoId, current, deps.now);
    }
    outcome.reindexed += (await reindex(deps, [link])).reindexed;
  }
  return outcome;
}
