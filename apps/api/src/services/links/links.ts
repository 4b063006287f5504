import {
  appendAudit,
  type Database,
  deleteLink,
  findLinkOfCollection,
  findNamespace,
  insertLink,
  type LinkWithNames,
  linksSealedWithOtherKeys,
  listLinks,
  type NamespaceRow,
  recordLinkFailure,
  updateLinkSealedToken,
} from '@atskills/db';
import { type LinkAccess, LinkAccessError, type TokenKeyring, tokenContext } from '@atskills/github-auth';
import { formatIdentity, trimEdgeSlashes } from '@atskills/protocol';
import { problem } from '../../problems.js';
import { checkAccountName, checkCollectionName } from '../auth/names.js';
import { requireScope, roleIn } from '../auth/permissions.js';
import type { Viewer } from '../auth/viewer.js';

/** Starts the index of a link (the crawler's link queue; in-process or BullMQ). */
export interface LinkIndexQueue {
  enqueue(linkId: number, options?: { force?: boolean; requestId?: string }): Promise<void>;
}

/**
 * Queues an index of a link; a queue that refuses the job (Redis down, a job it cannot take) is a 503 the
 * caller may retry, never a 500. `onRefused` runs first, so nothing is left waiting for a job that never
 * came (a new link is marked failed instead of `queued` forever).
 */
export async function enqueueLinkIndex(
  queue: LinkIndexQueue | null,
  linkId: number,
  options: { force?: boolean; requestId?: string },
  onRefused?: (message: string) => Promise<unknown>,
): Promise<void> {
  if (!queue) return;
  try {
    await queue.enqueue(linkId, options);
  } catch (error) {
    const message = `The index could not be queued (${(error as Error).message}).`;
    await onRefused?.(message);
    throw problem('unavailable', `${message} Try again, or start it with POST .../index.`);
  }
}

/** A link as the API shows it: never the token, only its last four characters and expiry. */
export interface LinkView {
  identity: string;
  repository: string;
  folder: string;
  visibility: 'public' | 'private';
  credential:
    | { kind: 'app'; installationId: number | null }
    | { kind: 'token'; last4: string; expiresAt: string | null };
  status: 'queued' | 'indexing' | 'indexed' | 'failed';
  /** True while members read the last good revision of a failed link. */
  stale: boolean;
  failure: { code: string; message: string; since: string | null } | null;
  headCommit: string | null;
  lastIndexedAt: string | null;
  problems: { path: string; code: string; message: string }[];
  createdAt: string;
}

/** What `POST /v1/teams/<team>/links` takes. */
export interface CreateLinkInput {
  repo: string;
  collection: string;
  folder?: string;
  visibility: 'public' | 'private';
  credential: { kind: 'app' } | { kind: 'token'; token: string; expiresAt?: string };
}

/** Who acts, and the request. */
export interface LinkContext {
  viewer: Viewer;
  requestId: string;
  now: Date;
}

// GitHub owner and repository names (identities validate strictly later).
const REPOSITORY = /^([A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38})\/([A-Za-z0-9._-]{1,100})$/;
// What GitHub tokens look like (classic ghp_, fine-grained github_pat_, ...): checked without echoing it.
const GITHUB_TOKEN = /^[A-Za-z0-9_]{20,255}$/;

/** The link's view for its owners. */
export function linkView(link: LinkWithNames): LinkView {
  return {
    identity: formatIdentity('hub', `${link.namespace}/${link.collection}`),
    repository: `${link.githubOwner}/${link.githubRepo}`,
    folder: link.folder,
    visibility: link.visibility === 'public' ? 'public' : 'private',
    credential:
      link.credential === 'app'
        ? { kind: 'app', installationId: link.installationId }
        : {
            kind: 'token',
            last4: link.tokenLast4 ?? '',
            expiresAt: link.tokenExpiresAt?.toISOString() ?? null,
          },
    status: link.status as LinkView['status'],
    stale: link.status === 'failed' && link.headCommit !== null,
    failure:
      link.status === 'failed'
        ? {
            code: link.failureCode ?? 'index-failed',
            message: link.failureMessage ?? '',
            since: link.failedAt?.toISOString() ?? null,
          }
        : null,
    headCommit: link.headCommit,
    lastIndexedAt: link.lastIndexedAt?.toISOString() ?? null,
    problems: link.problems,
    createdAt: link.createdAt.toISOString(),
  };
}

/**
 * The namespace whose links the viewer manages: a publish-scoped token of an owner (or a hub administrator).
 * The 403 reads the same for a missing namespace, so it reveals nothing.
 */
async function authorizeOwner(db: Database, viewer: Viewer, rawTeam: string): Promise<NamespaceRow> {
  const name = checkAccountName(rawTeam, 'namespace');
  requireScope(viewer, 'publish');
  const namespace = await findNamespace(db, name);
  if (!namespace || !(viewer.isAdmin || roleIn(viewer, name) === 'owner')) {
    throw problem('forbidden', `Only owners of "${name}" link repositories to hub:${name}.`);
  }
  return namespace;
}

/** Checks a folder inside the repository: relative, no `.`/`..`/empty segments; '' is the whole repository. */
function checkFolder(raw: string | undefined): string {
  const folder = trimEdgeSlashes((raw ?? '').trim());
  if (folder === '') return '';
  const segments = folder.split('/');
  if (
    folder.length > 512 ||
    folder.includes('\\') ||
    segments.some((s) => s === '' || s === '.' || s === '..' || /[\0-\x1f]/.test(s))
  ) {
    throw problem(
      'bad-path',
      'The folder is a path inside the repository, like skills/team (no "..", "." or empty parts).',
    );
  }
  return folder;
}

/** Why a credential was refused, as a problem (never repeating the token). */
function credentialProblem(error: LinkAccessError, repository: string) {
  if (error.code === 'app-not-configured' || error.code === 'token-keys-missing') {
    return problem('link-not-configured', error.message);
  }
  return problem(
    'link-credential-refused',
    `The token cannot read ${repository}: ${error.message} Give it read access to the repository's contents and metadata.`,
    { reason: error.code },
  );
}

/**
 * Links a repository folder to `hub:<team>/<collection>`. A token is checked against GitHub first (it must
 * read the repository) and stored sealed; an App link is checked by the indexer, which needs the App
 * installed on the repository and the repository's `.atskills-link` naming the team. Then the index starts.
 */
export async function createLink(
  db: Database,
  access: LinkAccess,
  queue: LinkIndexQueue | null,
  rawTeam: string,
  input: CreateLinkInput,
  ctx: LinkContext,
): Promise<LinkView> {
  const namespace = await authorizeOwner(db, ctx.viewer, rawTeam);
  const collection = checkCollectionName(input.collection);
  const match = REPOSITORY.exec(input.repo.trim());
  if (!match) throw problem('bad-request', 'repo is a GitHub repository as owner/name.');
  const [, owner = '', repo = ''] = match;
  const repository = `${owner}/${repo}`;
  const folder = checkFolder(input.folder);

  let credential: Parameters<typeof insertLink>[1]['credential'];
  let githubRepoId: number | null = null;
  if (input.credential.kind === 'app') {
    if (!access.app) {
      throw problem(
        'link-not-configured',
        'This hub has no GitHub App configured; link with a fine-grained token.',
      );
    }
    credential = { kind: 'app', installationId: null };
  } else {
    const token = input.credential.token.trim();
    if (!GITHUB_TOKEN.test(token)) {
      throw problem(
        'bad-request',
        'token is not a GitHub token (letters, digits and "_", like github_pat_...).',
      );
    }
    if (!access.keyring.enabled) {
      throw problem(
        'link-not-configured',
        'This hub stores no tokens (LINK_TOKEN_KEYS is not set); link with the GitHub App.',
      );
    }
    let expiresAt: Date | null = null;
    if (input.credential.expiresAt !== undefined) {
      expiresAt = new Date(input.credential.expiresAt);
      if (Number.isNaN(expiresAt.getTime())) throw problem('bad-request', 'expiresAt is an ISO 8601 date.');
    }
    try {
      githubRepoId = (await access.readRepository(owner, repo, token)).id;
    } catch (error) {
      if (error instanceof LinkAccessError) throw credentialProblem(error, repository);
      throw error;
    }
    const sealed = access.keyring.seal(token, tokenContext(namespace.name, collection));
    credential = {
      kind: 'token',
      keyId: sealed.keyId,
      sealed: sealed.sealed,
      last4: token.slice(-4),
      expiresAt,
    };
  }

  const identity = formatIdentity('hub', `${namespace.name}/${collection}`);
  const link = await db.transaction(async (tx) => {
    const row = await insertLink(tx, {
      namespaceId: namespace.id,
      collection,
      visibility: input.visibility,
      githubOwner: owner,
      githubRepo: repo,
      githubRepoId,
      folder,
      credential,
      createdBy: ctx.viewer.userId,
      at: ctx.now,
    });
    if (!row) {
      throw problem(
        'conflict',
        `${identity} exists already; unlink or delete it, or choose another collection name.`,
      );
    }
    await appendAudit(tx, {
      namespaceId: namespace.id,
      actorUserId: ctx.viewer.userId,
      action: 'link.create',
      target: identity,
      details: {
        repository,
        folder,
        visibility: input.visibility,
        credential: credential.kind,
        ...(credential.kind === 'token' ? { tokenLast4: credential.last4 } : {}),
      },
      requestId: ctx.requestId,
      at: ctx.now,
    });
    return row;
  });
  await enqueueLinkIndex(queue, link.id, { requestId: ctx.requestId }, async (message) => {
    const created = await findLinkOfCollection(db, namespace.name, collection);
    if (created) {
      await recordLinkFailure(db, created, {
        code: 'index-not-queued',
        message,
        at: ctx.now,
        requestId: ctx.requestId,
      });
    }
  });
  const stored = await findLinkOfCollection(db, namespace.name, collection);
  return linkView(stored as LinkWithNames);
}

/** Every link of a team with its status (owners). */
export async function listTeamLinks(db: Database, viewer: Viewer, rawTeam: string): Promise<LinkView[]> {
  const namespace = await authorizeOwner(db, viewer, rawTeam);
  const links = await listLinks(db, namespace.id);
  return links.map(linkView);
}

/**
 * One link's index status and problems: members of the team read it (like the collection itself);
 * everyone else gets the 404 of a collection that does not exist.
 */
export async function linkStatus(
  db: Database,
  viewer: Viewer,
  rawTeam: string,
  rawCollection: string,
): Promise<LinkView> {
  const team = rawTeam.toLowerCase();
  const collection = rawCollection.toLowerCase();
  const link = await findLinkOfCollection(db, team, collection);
  const member = viewer.isAdmin || viewer.readableNamespaces.includes(team);
  if (!link || !member) throw problem('not-found', `No linked collection hub:${team}/${collection}.`);
  const view = linkView(link);
  // Only owners see which credential it uses.
  if (!(viewer.isAdmin || roleIn(viewer, team) === 'owner')) {
    return {
      ...view,
      credential:
        view.credential.kind === 'app'
          ? { kind: 'app', installationId: null }
          : { kind: 'token', last4: '', expiresAt: null },
    };
  }
  return view;
}

/** Starts a new index of a link now (owners); answers its status. */
export async function reindexLink(
  db: Database,
  queue: LinkIndexQueue | null,
  rawTeam: string,
  rawCollection: string,
  ctx: LinkContext,
): Promise<LinkView> {
  const namespace = await authorizeOwner(db, ctx.viewer, rawTeam);
  const link = await findLinkOfCollection(db, namespace.name, rawCollection);
  if (!link)
    throw problem('not-found', `No linked collection hub:${namespace.name}/${rawCollection.toLowerCase()}.`);
  await enqueueLinkIndex(queue, link.id, { force: true, requestId: ctx.requestId });
  return linkView(link);
}

/** Unlinks: the collection is deleted (410 to members, 404 to others) and the sealed token erased. */
export async function unlink(
  db: Database,
  rawTeam: string,
  rawCollection: string,
  ctx: LinkContext,
): Promise<{ identity: string; unlinked: true; lastCommit: string | null }> {
  const namespace = await authorizeOwner(db, ctx.viewer, rawTeam);
  const collection = rawCollection.toLowerCase();
  const identity = formatIdentity('hub', `${namespace.name}/${collection}`);
  return db.transaction(async (tx) => {
    const link = await findLinkOfCollection(tx, namespace.name, collection);
    if (!link) throw problem('not-found', `No linked collection ${identity}.`);
    await deleteLink(tx, link, ctx.now);
    await appendAudit(tx, {
      namespaceId: namespace.id,
      actorUserId: ctx.viewer.userId,
      action: 'link.delete',
      target: identity,
      details: { repository: `${link.githubOwner}/${link.githubRepo}`, lastCommit: link.headCommit },
      requestId: ctx.requestId,
      at: ctx.now,
    });
    return { identity, unlinked: true as const, lastCommit: link.headCommit };
  });
}

/**
 * Re-seals every stored token that another key than the current (first) one of LINK_TOKEN_KEYS sealed, so
 * the old key can then be dropped from the configuration. Returns how many were re-sealed.
 */
export async function rotateLinkTokens(db: Database, keyring: TokenKeyring): Promise<number> {
  const current = keyring.currentKeyId;
  if (!current)
    throw problem('link-not-configured', 'LINK_TOKEN_KEYS is not set: there is no key to rotate to.');
  let moved = 0;
  for (const link of await linksSealedWithOtherKeys(db, current)) {
    const context = tokenContext(link.namespace, link.collection);
    const sealed = keyring.reseal({ keyId: link.tokenKeyId ?? '', sealed: link.tokenSealed ?? '' }, context);
    if (sealed) {
      await updateLinkSealedToken(db, link.id, sealed);
      moved++;
    }
  }
  return moved;
}

/** Refuses uploads and deletions of a linked collection: its content comes from the repository. */
export async function refuseIfLinked(db: Database, namespace: string, collection: string): Promise<void> {
  const link = await findLinkOfCollection(db, namespace, collection);
  if (link) {
    throw problem(
      'collection-linked',
      `hub:${link.namespace}/${link.collection} follows ${link.githubOwner}/${link.githubRepo}; push there, or unlink it first.`,
    );
  }
}
