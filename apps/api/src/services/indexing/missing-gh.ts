import { currentRepositoryName, type Database, openIndexRequest, repositoryStatus } from '@atskills/db';
import { formatIdentity, isValidGithubRepositoryName, splitIdentityPrefix } from '@atskills/protocol';
import { type HttpProblem, isHttpProblem, problem } from '../../problems.js';
import { type CallerRequest, rateLimitKey } from '../caller-key.js';
import { locateIdentity } from '../locate.js';
import { type IndexRequests, quotaCaller, repositoryStatusUrl } from './index-requests.js';

/** What explaining a missing identity needs of the hub (a Fastify instance fits). */
export interface MissingGhHub {
  db: Database;
  config: { publicUrl: string };
  indexRequests: Pick<IndexRequests, 'enabled' | 'spend' | 'request'>;
}

/** What it needs of the request: its URL, id and caller (a Fastify request fits). */
export interface MissingGhRequest extends CallerRequest {
  url: string;
  id: string;
}

/** Seconds a client should wait before asking again for a repository being indexed. */
export const INDEXING_RETRY_AFTER_S = 5;

/** `gh:owner/repo/path` as a URL path, each segment percent-encoded. */
function identityUrlText(identity: string): string {
  const { rest } = splitIdentityPrefix(identity);
  return formatIdentity('gh', rest.split('/').map(encodeURIComponent).join('/'));
}

/**
 * The request URL pointed at the moved identity: the identity in the path (every read route ends with it)
 * is replaced by the new canonical one; on routes that take it in the query (`?prefix=`), that value is.
 */
export function movedLocation(url: string, text: string, moved: string): string {
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  const query = q < 0 ? undefined : url.slice(q + 1);
  const lower = path.toLowerCase();
  const at = lower.includes('gh:') ? lower.indexOf('gh:') : lower.indexOf('gh%3a');
  if (at >= 0)
    return `${path.slice(0, at)}${identityUrlText(moved)}${query !== undefined ? `?${query}` : ''}`;
  const params = new URLSearchParams(query ?? '');
  for (const [key, value] of [...params]) {
    if (value === text) params.set(key, `${moved}${text.endsWith('/') ? '/' : ''}`);
  }
  return `${path}?${params.toString()}`;
}

/**
 * The identity a `gh:` identity of a renamed or transferred repository goes by now; undefined for any
 * other identity (not `gh:`, malformed, or its repository was never renamed).
 */
export async function movedGhIdentity(db: Database, text: string): Promise<string | undefined> {
  const location = ghLocationOf(text);
  if (!location) return undefined;
  const current = await currentRepositoryName(db, location.owner, location.container);
  return current.moved ? identityInRepository(current, location.path) : undefined;
}

/** Where a `gh:` identity points; undefined for any other identity, or a malformed one. */
function ghLocationOf(text: string) {
  try {
    const { location } = locateIdentity(text);
    return location.source === 'gh' ? location : undefined;
  } catch {
    return undefined;
  }
}

/** The identity of `path` inside a repository under its current name. */
function identityInRepository(repository: { owner: string; name: string }, path: string): string {
  return formatIdentity('gh', [repository.owner, repository.name, path].filter((p) => p !== '').join('/'));
}

/**
 * Why a `gh:` identity has no answer, as the problem to send instead of the plain 404: `301 moved` (with
 * Location) when its repository was renamed or transferred; `404` with Retry-After and the status URL when
 * the repository is not indexed yet, after starting (or joining) its index request. Undefined when the
 * plain 404 is the truth (an indexed repository without that path, a failed one, a name GitHub refuses).
 */
export async function explainMissingGh(
  app: MissingGhHub,
  request: MissingGhRequest,
  text: string,
): Promise<HttpProblem | undefined> {
  const location = ghLocationOf(text);
  if (!location) return undefined;
  const { owner, container: repo, path } = location;
  const current = await currentRepositoryName(app.db, owner, repo);
  if (current.moved) {
    const identity = identityInRepository(current, path);
    return problem(
      'moved',
      `gh:${owner}/${repo} is now gh:${current.owner}/${current.name}`,
      { location: identity },
      { location: movedLocation(request.url, text, identity) },
    );
  }
  if (!isValidGithubRepositoryName(`${owner}/${repo}`)) return undefined;
  const statusUrl = repositoryStatusUrl(app.config.publicUrl, current.owner, current.name);
  const pending = (detail: string) =>
    problem(
      'not-found',
      detail,
      { indexStatus: 'queued', statusUrl },
      { 'retry-after': String(INDEXING_RETRY_AFTER_S), link: `<${statusUrl}>; rel="status"` },
    );
  if (current.known) {
    if (await openIndexRequest(app.db, current.owner, current.name)) {
      return pending(`gh:${current.owner}/${current.name} is being indexed; retry shortly`);
    }
    const status = await repositoryStatus(app.db, current.owner, current.name);
    if ('movedTo' in status || status.status !== 'not-indexed') {
      return problem('not-found', `Nothing at ${text}`, { statusUrl });
    }
  }
  if (!app.indexRequests.enabled) return undefined;
  try {
    app.indexRequests.spend(rateLimitKey(request));
  } catch (error) {
    if (isHttpProblem(error))
      return problem('not-found', `gh:${owner}/${repo} is not indexed`, { statusUrl });
    throw error;
  }
  try {
    await app.indexRequests.request(current.owner, current.name, 'on-demand', {
      requestId: request.id,
      caller: quotaCaller(request),
    });
  } catch (error) {
    // The caller's GitHub quota is spent (or GitHub just said 404): the plain answer, no crawl.
    if (isHttpProblem(error) && (error.code === 'rate-limited' || error.code === 'not-found'))
      return problem('not-found', `gh:${owner}/${repo} is not indexed`, { statusUrl });
    throw error;
  }
  return pending(
    `gh:${current.owner}/${current.name} is not indexed yet; indexing has started, retry shortly`,
  );
}

/** Runs a read; a 404 on a `gh:` identity is replaced by explainMissingGh's answer when it has one. */
export async function withMissingGh<T>(
  app: MissingGhHub,
  request: MissingGhRequest,
  text: string,
  read: () => Promise<T>,
): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (!isHttpProblem(error) || error.code !== 'not-found') throw error;
    throw (await explainMissingGh(app, request, text)) ?? error;
  }
}
