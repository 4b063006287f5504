import { currentRepositoryName, openIndexRequest, repositoryStatus } from '@atskills/db';
import { formatIdentity, isValidGithubRepositoryName, splitIdentityPrefix } from '@atskills/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { rateLimitKey } from '../../plugins/rate-limit.js';
import { type HttpProblem, isHttpProblem, problem } from '../../problems.js';
import { locateIdentity } from '../locate.js';
import { repositoryStatusUrl } from './index-requests.js';

/** Seconds a client should wait before asking again for a repository being indexed. */
export const INDEXING_RETRY_AFTER_S = 5;

/**
 * `text` (an identity as the client spelled it: `gh:` or `gh%3A`, `/` or `%2F`, any letter case) with its
 * repository `from` replaced by `to`; undefined when it does not start with that repository.
 */
export function renamedIdentityText(
  text: string,
  from: { owner: string; repo: string },
  to: { owner: string; name: string },
): string | undefined {
  const { source, rest } = splitIdentityPrefix(text, { encodedColon: true });
  if (source !== 'gh') return undefined;
  const prefix = text.slice(0, text.length - rest.length);
  const separatorAt = (at: number) =>
    rest.startsWith('/', at)
      ? '/'
      : rest.slice(at, at + 3).toUpperCase() === '%2F'
        ? rest.slice(at, at + 3)
        : '';
  if (rest.slice(0, from.owner.length).toLowerCase() !== from.owner.toLowerCase()) return undefined;
  const slash = separatorAt(from.owner.length);
  const repoAt = from.owner.length + slash.length;
  if (!slash || rest.slice(repoAt, repoAt + from.repo.length).toLowerCase() !== from.repo.toLowerCase()) {
    return undefined;
  }
  const tail = rest.slice(repoAt + from.repo.length);
  if (tail !== '' && !separatorAt(from.repo.length + repoAt)) return undefined;
  return `${prefix}${to.owner}${slash}${to.name}${tail}`;
}

/** The request URL with a moved repository renamed in its identity (path or query), else the identity's new URL form. */
function movedLocation(
  url: string,
  text: string,
  from: { owner: string; repo: string },
  to: { owner: string; name: string },
) {
  const renamed = renamedIdentityText(text, from, to);
  if (!renamed) return undefined;
  // The route may have normalised the prefix (`gh%3A` -> `gh:`): the part after it is as the client sent it.
  const oldRest = splitIdentityPrefix(text, { encodedColon: true }).rest;
  const newRest = splitIdentityPrefix(renamed, { encodedColon: true }).rest;
  if (url.includes(oldRest)) return url.replace(oldRest, newRest);
  return replaceInUrl(url, text, renamed);
}

/** The request URL with the identity text `from` replaced by `to`, in the path or in a query value. */
export function replaceInUrl(url: string, from: string, to: string): string {
  if (url.includes(from)) return url.replace(from, to);
  const [path = '', query = ''] = url.split('?', 2);
  const params = new URLSearchParams(query);
  for (const [key, value] of [...params]) if (value === from) params.set(key, to);
  return `${path}?${params.toString()}`;
}

/**
 * Why a `gh:` identity has no answer, as the problem to send instead of the plain 404: `301 moved` (with
 * Location) when its repository was renamed or transferred; `404` with Retry-After and the status URL when
 * the repository is not indexed yet, after starting (or joining) its index request. Undefined when the
 * plain 404 is the truth (an indexed repository without that path, a failed one, a name GitHub refuses).
 */
export async function explainMissingGh(
  app: FastifyInstance,
  request: FastifyRequest,
  text: string,
): Promise<HttpProblem | undefined> {
  let location: ReturnType<typeof locateIdentity>['location'];
  try {
    location = locateIdentity(text).location;
  } catch {
    return undefined;
  }
  if (location.source !== 'gh') return undefined;
  const { owner, container: repo, path } = location;
  const current = await currentRepositoryName(app.db, owner, repo);
  if (current.moved) {
    const identity = formatIdentity(
      'gh',
      [current.owner, current.name, path].filter((p) => p !== '').join('/'),
    );
    return problem(
      'moved',
      `gh:${owner}/${repo} is now gh:${current.owner}/${current.name}`,
      { location: identity },
      { location: movedLocation(request.url, text, { owner, repo }, current) ?? identity },
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
  await app.indexRequests.request(current.owner, current.name, 'on-demand', { requestId: request.id });
  return pending(
    `gh:${current.owner}/${current.name} is not indexed yet; indexing has started, retry shortly`,
  );
}

/** Runs a read; a 404 on a `gh:` identity is replaced by explainMissingGh's answer when it has one. */
export async function withMissingGh<T>(
  app: FastifyInstance,
  request: FastifyRequest,
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
