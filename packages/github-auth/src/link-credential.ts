import { request as octokitRequest } from '@octokit/request';
import { RequestError } from '@octokit/request-error';
import { AppAccessError, GithubApp } from './github-app.js';
import { isRateLimitAnswer } from './rate-limit.js';
import type { GithubAuthSettings } from './settings.js';
import { TokenKeyring, TokenKeyringError } from './token-keyring.js';

/** What a link stores about its credential (a row of repository_links, as far as this package cares). */
export interface LinkCredentialRow {
  credential: string;
  installationId: number | null;
  tokenKeyId: string | null;
  tokenSealed: string | null;
  githubRepo: string;
}

/** Why a link's credential cannot read its repository; the code goes into the link's status. */
export type LinkAccessCode =
  | AppAccessError['code']
  | 'app-not-configured'
  | 'token-keys-missing'
  | 'token-unreadable'
  | 'credential-refused'
  | 'repository-not-found';

/** The credential of a link does not (or no longer) give read access to its repository. */
export class LinkAccessError extends Error {
  override name = 'LinkAccessError';
  constructor(
    readonly code: LinkAccessCode,
    message: string,
  ) {
    super(message);
  }
}

/** What GitHub says about a repository the credential may read. */
export interface ReadableRepository {
  id: number;
  owner: string;
  name: string;
  private: boolean;
  defaultBranch: string;
}

/** The identity a sealed token is bound to: a token sealed for one collection opens for no other. */
export function tokenContext(namespace: string, collection: string): string {
  return `hub:${namespace.toLowerCase()}/${collection.toLowerCase()}`;
}

/**
 * Everything the hub needs to act as a link's credential: opens sealed tokens, mints App installation
 * tokens (limited to the link's repository), and asks GitHub whether a credential reads a repository.
 * Built once from the settings; the API and the crawler each hold one.
 */
export class LinkAccess {
  readonly keyring: TokenKeyring;
  readonly app: GithubApp | null;
  readonly appSlug: string | undefined;
  private readonly request: typeof octokitRequest;

  constructor(settings: GithubAuthSettings, apiUrl: string) {
    this.keyring = new TokenKeyring(settings.tokenKeys);
    this.app = settings.app
      ? new GithubApp({ appId: settings.app.appId, privateKey: settings.app.privateKey, apiUrl })
      : null;
    this.appSlug = settings.app?.slug;
    this.request = octokitRequest.defaults({
      baseUrl: apiUrl.replace(/(?<!\/)\/+$/, ''),
      headers: { 'user-agent': 'atskills-hub' },
    });
  }

  /** The installation of the App on `owner/repo`; LinkAccessError when the App is not set up or not installed. */
  async installationFor(owner: string, repo: string): Promise<number> {
    if (!this.app) {
      throw new LinkAccessError(
        'app-not-configured',
        'This hub has no GitHub App configured; link with a token.',
      );
    }
    try {
      return (await this.app.installationFor(owner, repo)).id;
    } catch (error) {
      if (error instanceof AppAccessError) throw new LinkAccessError(error.code, error.message);
      throw error;
    }
  }

  /** A token that reads the link's repository now: the opened sealed token or a fresh installation token. */
  async tokenFor(
    link: LinkCredentialRow & { namespace: string; collection: string },
    options: { refresh?: boolean } = {},
  ): Promise<string> {
    if (link.credential === 'app') {
      if (!this.app)
        throw new LinkAccessError('app-not-configured', 'This hub has no GitHub App configured.');
      try {
        return (await this.app.tokenFor(link.installationId as number, link.githubRepo, options)).token;
      } catch (error) {
        if (error instanceof AppAccessError) throw new LinkAccessError(error.code, error.message);
        throw error;
      }
    }
    if (!this.keyring.enabled) {
      throw new LinkAccessError('token-keys-missing', 'LINK_TOKEN_KEYS is not configured on this hub.');
    }
    try {
      return this.keyring.open(
        { keyId: link.tokenKeyId ?? '', sealed: link.tokenSealed ?? '' },
        tokenContext(link.namespace, link.collection),
      );
    } catch (error) {
      if (error instanceof TokenKeyringError) {
        throw new LinkAccessError('token-unreadable', `The stored token cannot be opened: ${error.message}.`);
      }
      throw error;
    }
  }

  /**
   * Reads the repository's metadata with a token (GET /repos/{owner}/{repo}); LinkAccessError when GitHub
   * refuses the token (401) or does not show the repository to it (404, GitHub's answer for private ones).
   */
  async readRepository(owner: string, repo: string, token: string): Promise<ReadableRepository> {
    return this.readRepositoryAt('GET /repos/{owner}/{repo}', { owner, repo }, `${owner}/${repo}`, token);
  }

  /**
   * The same by GitHub's numeric id (GET /repositories/{id}), which renames and transfers keep: what the
   * repository a link follows is called now, and whether the credential still reads it.
   */
  async readRepositoryById(id: number, token: string): Promise<ReadableRepository> {
    return this.readRepositoryAt('GET /repositories/{id}', { id }, `repository ${id}`, token);
  }

  private async readRepositoryAt(
    route: 'GET /repos/{owner}/{repo}' | 'GET /repositories/{id}',
    params: { owner: string; repo: string } | { id: number },
    what: string,
    token: string,
  ): Promise<ReadableRepository> {
    try {
      const { data } = (await this.request(route, {
        ...params,
        headers: { authorization: `token ${token}` },
      })) as {
        data: {
          id: number;
          owner: { login: string };
          name: string;
          private: boolean;
          default_branch: string;
        };
      };
      return {
        id: Number(data.id),
        owner: data.owner.login,
        name: data.name,
        private: data.private,
        defaultBranch: data.default_branch,
      };
    } catch (error) {
      // A rate limit (403 or 429 with Retry-After or no requests left) says nothing about the credential.
      if (
        error instanceof RequestError &&
        (error.status === 401 || (error.status === 403 && !isRateLimitAnswer(error)))
      ) {
        throw new LinkAccessError(
          'credential-refused',
          'GitHub refused the credential (revoked or expired).',
        );
      }
      if (error instanceof RequestError && error.status === 404) {
        throw new LinkAccessError(
          'repository-not-found',
          `The credential cannot read ${what} (GitHub answers 404: missing, or not covered by it).`,
        );
      }
      throw error;
    }
  }
}
