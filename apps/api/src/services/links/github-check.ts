import type { LinkWithNames } from '@atskills/db';
import {
  type LinkAccess,
  type LinkAccessCode,
  LinkAccessError,
  type ReadableRepository,
} from '@atskills/github-auth';
import { problem } from '../../problems.js';

/** What GitHub answers a link's own credential about the repository the link follows. */
export type LinkRepositoryAnswer =
  | { kind: 'readable'; repository: ReadableRepository }
  | { kind: 'unreadable'; code: LinkAccessCode; message: string }
  /** The hub could not ask (no App or token key configured, a token it cannot open): GitHub said nothing. */
  | { kind: 'unasked'; message: string };

/** The refusals that are GitHub's answer; the other LinkAccessError codes are the hub's own configuration. */
const GITHUB_REFUSALS = new Set<LinkAccessCode>([
  'credential-refused',
  'repository-not-found',
  'app-not-installed',
  'installation-suspended',
  'installation-revoked',
]);

/**
 * Asks GitHub, with the link's own credential, about the repository the link follows: by its numeric id
 * when the link knows it (renames and transfers keep it, so the answer names the repository as it is now),
 * else by the link's name. An App credential is a fresh installation token (a cached one would outlive an
 * uninstalled or suspended installation), minted for the repository's name as the link stores it; when
 * that fails and a delivery claims a new name, a token for that name is tried too, since tokens are minted
 * per name. The claimed name only chooses a token: the answer is still GitHub's about the link's repository
 * id, and a token for it that GitHub refuses proves nothing (the answer for the stored name stands).
 * GitHub not answering is a 503, so the delivery is redelivered rather than taken for an answer.
 */
export async function askGithub(
  access: LinkAccess,
  link: LinkWithNames,
  claimedName?: string,
): Promise<LinkRepositoryAnswer> {
  const stored = await askWith(access, link, link.githubRepo);
  if (stored.kind === 'readable' || link.credential !== 'app' || link.githubRepoId === null) return stored;
  if (!claimedName || claimedName.toLowerCase() === link.githubRepo.toLowerCase()) return stored;
  const claimed = await askWith(access, link, claimedName);
  return claimed.kind === 'readable' ? claimed : stored;
}

async function askWith(
  access: LinkAccess,
  link: LinkWithNames,
  tokenName: string,
): Promise<LinkRepositoryAnswer> {
  if (link.credential === 'app' && link.installationId === null)
    return { kind: 'unasked', message: 'The link knows no App installation yet.' };
  try {
    const token = await access.tokenFor({ ...link, githubRepo: tokenName }, { refresh: true });
    const repository =
      link.githubRepoId !== null
        ? await access.readRepositoryById(link.githubRepoId, token)
        : await access.readRepository(link.githubOwner, link.githubRepo, token);
    return { kind: 'readable', repository };
  } catch (error) {
    if (error instanceof LinkAccessError) {
      return GITHUB_REFUSALS.has(error.code)
        ? { kind: 'unreadable', code: error.code, message: error.message }
        : { kind: 'unasked', message: error.message };
    }
    throw problem(
      'unavailable',
      `GitHub could not be asked about ${link.githubOwner}/${link.githubRepo} (${(error as Error).message}); nothing was changed.`,
    );
  }
}
