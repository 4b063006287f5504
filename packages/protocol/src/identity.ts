import { IdentityError } from './errors.js';

/** Where an identity points: the project's own `.atskills`, a GitHub repository, or the hub. */
export type Source = 'local' | 'gh' | 'hub';

/** A parsed, normalized identity. */
export interface Identity {
  source: Source;
  /** Normalized path, no prefix, no trailing slash. */
  path: string;
  /** Canonical text: 'deploy/runbook' | 'gh:o/r/p' | 'hub:t/c/p'. */
  identity: string;
}

/** Parses a prefixed identity, a bare path or a GitHub URL; throws IdentityError. */
export function parseIdentity(text: string): Identity {
  throw new IdentityError('empty', `not implemented: ${text}`);
}

/** The canonical text of an identity. */
export function normalizeIdentity(text: string): string {
  return parseIdentity(text).identity;
}

/** Canonical identity text for a source and an already normalized path. */
export function formatIdentity(source: Source, path: string): string {
  return source === 'local' ? path : `${source}:${path}`;
}

/** Where an identity lives on disk, relative to the project root. */
export function diskPath(id: Identity): string {
  return id.source === 'local' ? `.atskills/${id.path}` : `.atskills/${id.source}/${id.path}`;
}

/** Owner, repository and sub-path ('' for the root) of a `gh:` identity. */
export function ghParts(id: Identity): { owner: string; repo: string; subpath: string } {
  const [owner = '', repo = '', ...rest] = id.path.split('/');
  return { owner, repo, subpath: rest.join('/') };
}

/** Namespace, collection and sub-path ('' for the whole collection) of a `hub:` identity. */
export function hubParts(id: Identity): { namespace: string; collection: string; subpath: string } {
  const [namespace = '', collection = '', ...rest] = id.path.split('/');
  return { namespace, collection, subpath: rest.join('/') };
}

/** Whether GitHub would accept `s` as a user or organization login. */
export function isValidGithubOwner(s: string): boolean {
  return /^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$/.test(s);
}

/** Whether GitHub would accept `s` as a repository name. */
export function isValidGithubRepo(s: string): boolean {
  return /^[A-Za-z0-9._-]{1,100}$/.test(s) && s !== '.' && s !== '..';
}
