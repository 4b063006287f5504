import { IdentityError } from './errors.js';
import { trimTrailingSlashes } from './slashes.js';

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

/** The longest path an identity may have (SPEC 1.3), counted in characters. */
export const MAX_IDENTITY_PATH = 512;
/** Raw input past this many characters is refused before any further work (hostile input). */
const MAX_RAW_IDENTITY = 4096;

// C0, DEL and C1 control characters.
const CONTROL_CHAR = /[\u0000-\u001f\u007f-\u009f]/;
const PREFIXED = /^([^/:]*):/;
const GITHUB_URL = /^https?:\/\//i;
// A GitHub URL pasted without its scheme: the host exactly, then a path or nothing (`github.com.example.net`
// and `evil-github.com` are folder names of a bare path, never GitHub).
const SCHEMELESS_GITHUB_URL = /^(?:www\.)?github\.com(?:[/?#]|$)/i;
const GITHUB_HOSTS = new Set(['github.com', 'www.github.com']);
// `%2F` / `%5C` would decode into a new path segment (or a backslash); SPEC 1.3 refuses them instead.
const ENCODED_SEPARATOR = /%(?:2f|5c)/i;
const PREFIX_ONLY = /^(gh|hub):/i;
const PREFIX_OR_ENCODED = /^(gh|hub)(?::|%3A)/i;

/** Parses a prefixed identity, a bare path or a GitHub URL; percent-decodes; throws IdentityError. */
export function parseIdentity(text: string): Identity {
  if (text.length === 0) throw new IdentityError('empty', 'The identity is empty.');
  if (text.length > MAX_RAW_IDENTITY) {
    throw new IdentityError('too-long', `The identity is longer than ${MAX_IDENTITY_PATH} characters.`);
  }
  if (isGithubUrl(text)) return fromGithubUrl(text);
  const prefixed = PREFIXED.exec(text);
  if (prefixed) {
    const prefix = (prefixed[1] ?? '').toLowerCase();
    if (prefix !== 'gh' && prefix !== 'hub') {
      throw new IdentityError(
        'unknown-prefix',
        `Unknown identity prefix "${prefixed[1]}:"; use gh:, hub: or a bare path (write a colon inside a path as %3A).`,
        { prefix: prefixed[1] },
      );
    }
    const rest = text.slice(prefixed[0].length);
    // A redundant prefix before a pasted URL (`gh:https://github.com/o/r`, `gh:github.com/o/r`).
    if (prefix === 'gh' && isGithubUrl(rest)) return fromGithubUrl(rest);
    return buildIdentity(prefix, decodePath(rest));
  }
  return buildIdentity('local', decodePath(text));
}

/** The canonical text of an identity (idempotent). */
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

/**
 * Whether GitHub would accept `s` as a user or organization login: 1-39 letters, digits and hyphens, not
 * starting with a hyphen. (New accounts may not end in or double a hyphen, but older accounts that do still
 * exist and own public skills, so those are accepted.)
 */
export function isValidGithubOwner(s: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9-]{0,38}$/.test(s);
}

/** Whether GitHub would accept `s` as a repository name: 1-100 of letters, digits, '.', '_', '-'. */
export function isValidGithubRepo(s: string): boolean {
  return /^[A-Za-z0-9._-]{1,100}$/.test(s) && s !== '.' && s !== '..';
}

/** Whether the text is a GitHub URL, with or without its scheme. */
export function isGithubUrl(text: string): boolean {
  return GITHUB_URL.test(text) || SCHEMELESS_GITHUB_URL.test(text);
}

/** Whether `fullName` is `owner/repo` with an owner and a repository name GitHub accepts. */
export function isValidGithubRepositoryName(fullName: string): boolean {
  const [owner = '', repo = '', ...rest] = fullName.split('/');
  return rest.length === 0 && isValidGithubOwner(owner) && isValidGithubRepo(repo);
}

/** A GitHub repository named by its owner and its name. */
export interface GithubRepository {
  owner: string;
  repo: string;
}

/**
 * Parses a whole GitHub repository: `gh:owner/repo`, `owner/repo` or its URL (a trailing `.git` or `/`
 * allowed), by the same rules as a `gh:` identity; throws IdentityError for anything else, including a
 * path inside the repository unless `insidePath` is `repository` (then a path's repository is the answer:
 * an index request pasted from a skill's page on GitHub means that repository).
 */
export function parseGithubRepository(
  text: string,
  options: { insidePath?: 'refuse' | 'repository' } = {},
): GithubRepository {
  const trimmed = trimTrailingSlashes(text.trim()).replace(/\.git$/, '');
  const prefixed = GITHUB_URL.test(trimmed) || PREFIXED.test(trimmed);
  const id = parseIdentity(prefixed ? trimmed : formatIdentity('gh', trimmed));
  if (id.source !== 'gh') {
    throw new IdentityError('unknown-prefix', `"${text}" is not a GitHub repository (gh:owner/repo).`);
  }
  const { owner, repo, subpath } = ghParts(id);
  if (subpath !== '' && options.insidePath !== 'repository') {
    throw new IdentityError('bad-repo', `"${text}" names a path inside a repository, not gh:owner/repo.`, {
      repo: `${repo}/${subpath}`,
    });
  }
  return { owner, repo };
}

/** The git URL of a GitHub repository under `base` (https://github.com or a stand-in), its names encoded. */
export function githubGitUrl(base: string, owner: string, repo: string): string {
  return `${trimTrailingSlashes(base)}/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}.git`;
}

/**
 * Splits the `gh:` / `hub:` prefix (any case) off identity text; `local` with the text whole when it has
 * none. With `encodedColon`, `gh%3A` counts too: a URL may escape the prefix's colon unambiguously, a
 * message may not.
 */
export function splitIdentityPrefix(
  text: string,
  options: { encodedColon?: boolean } = {},
): { source: Source; rest: string } {
  const match = (options.encodedColon ? PREFIX_OR_ENCODED : PREFIX_ONLY).exec(text);
  if (!match) return { source: 'local', rest: text };
  return { source: (match[1] ?? '').toLowerCase() as Source, rest: text.slice(match[0].length) };
}

/** Strict percent-decoding; a literal '%' may not survive it, so decoding a canonical identity changes nothing. */
function decodePath(text: string): string {
  if (ENCODED_SEPARATOR.test(text)) {
    throw new IdentityError(
      'encoded-separator',
      'The identity holds an encoded separator (%2F or %5C); write "/" between folders, never inside one.',
    );
  }
  let decoded: string;
  try {
    decoded = decodeURIComponent(text);
  } catch {
    throw new IdentityError(
      'bad-percent-encoding',
      'The identity holds a malformed %-escape (write a literal space as %20, a colon as %3A).',
    );
  }
  if (decoded.includes('%')) {
    throw new IdentityError('bad-percent-encoding', 'A path may not hold a literal "%".');
  }
  return decoded;
}

function fromGithubUrl(text: string): Identity {
  const withoutScheme = text.replace(GITHUB_URL, '');
  const [location = ''] = withoutScheme.split(/[?#]/, 1);
  const slash = location.indexOf('/');
  const host = (slash < 0 ? location : location.slice(0, slash)).toLowerCase();
  if (!GITHUB_HOSTS.has(host)) {
    throw new IdentityError('unknown-prefix', `Only github.com URLs are identities, not "${host}".`, {
      host,
    });
  }
  const segments = (slash < 0 ? '' : location.slice(slash + 1)).split('/');
  if (segments.at(-1) === '') segments.pop();
  const [owner = '', repoWithSuffix = '', kind, _ref, ...sub] = segments;
  const repo = repoWithSuffix.endsWith('.git') ? repoWithSuffix.slice(0, -4) : repoWithSuffix;
  if (kind !== undefined) {
    if (kind !== 'tree' && kind !== 'blob') {
      throw new IdentityError('unknown-prefix', 'A GitHub URL must point at a repository, a tree or a blob.');
    }
    if (_ref === undefined) {
      throw new IdentityError(
        'incomplete',
        `A GitHub ${kind} URL needs a branch or revision after /${kind}/.`,
      );
    }
    // A blob URL names a file (usually SKILL.md); the skill is the folder holding it.
    if (kind === 'blob') sub.pop();
  }
  const path = [owner, repo, ...sub].filter((s, i) => i < 2 || s !== '').join('/');
  return buildIdentity('gh', decodePath(path));
}

/** Validates a decoded path for its source and builds the normalized identity. */
function buildIdentity(source: Source, decodedPath: string): Identity {
  // Hub names are case-insensitive; GitHub paths and project paths keep their case.
  const rawPath = source === 'hub' ? decodedPath.toLowerCase() : decodedPath;
  if (rawPath === '') {
    if (source === 'local') throw new IdentityError('empty', 'The identity is empty.');
    throw new IdentityError('incomplete', `A ${source}: identity needs ${partsNeeded(source)}.`);
  }
  if (CONTROL_CHAR.test(rawPath)) {
    throw new IdentityError('control-char', 'The identity holds a control character.');
  }
  if (rawPath.includes('\\')) {
    throw new IdentityError('backslash', 'The identity holds a backslash; separate folders with "/".');
  }
  if (rawPath.startsWith('/')) {
    throw new IdentityError('absolute', 'The identity starts with "/"; paths are relative to their source.');
  }
  const path = rawPath.endsWith('/') ? rawPath.slice(0, -1) : rawPath;
  const segments = path.split('/');
  if (segments.some((s) => s === '')) {
    throw new IdentityError('empty-segment', 'The identity has an empty path segment ("//").');
  }
  if (segments.some((s) => s === '.' || s === '..')) {
    throw new IdentityError('dot-segment', 'The identity may not hold "." or ".." segments.');
  }
  if ([...path].length > MAX_IDENTITY_PATH) {
    throw new IdentityError('too-long', `The identity is longer than ${MAX_IDENTITY_PATH} characters.`);
  }
  const [first = '', second] = segments;
  if (source === 'local' && first.includes(':')) {
    // 'a:b/c' would read back as prefix 'a:'; refusing it keeps canonical identities unambiguous.
    throw new IdentityError(
      'unknown-prefix',
      `A bare path's first folder may not hold a colon ("${first}").`,
    );
  }
  if (source !== 'local' && second === undefined) {
    throw new IdentityError('incomplete', `A ${source}: identity needs ${partsNeeded(source)}.`);
  }
  if (source === 'gh') {
    // A reference names an owner GitHub would accept today: it refuses one ending with a hyphen (SPEC 1.3),
    // so such a reference is a typo, never a skill (older accounts' events are still read by the hub).
    if (!isValidGithubOwner(first) || first.endsWith('-')) {
      throw new IdentityError('bad-owner', `"${first}" is not a valid GitHub user or organization name.`, {
        owner: first,
      });
    }
    if (!isValidGithubRepo(second ?? '')) {
      throw new IdentityError('bad-repo', `"${second}" is not a valid GitHub repository name.`, {
        repo: second,
      });
    }
  }
  return { source, path, identity: formatIdentity(source, path) };
}

function partsNeeded(source: Source): string {
  return source === 'gh'
    ? 'an owner and a repository (gh:owner/repo)'
    : 'a namespace and a collection (hub:team/name)';
}
