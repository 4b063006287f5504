import { createAppAuth } from '@octokit/auth-app';
import { request as octokitRequest } from '@octokit/request';
import { RequestError } from '@octokit/request-error';
import { isRateLimitAnswer } from './rate-limit.js';

/** A short-lived installation token, limited to some repositories of the installation. */
export interface InstallationToken {
  token: string;
  expiresAt: string;
}

/** Why GitHub would not give the App access (the link then fails with this code). */
export type AppAccessFailure = 'app-not-installed' | 'installation-suspended' | 'installation-revoked';

/** The App may not read a repository: not installed there, suspended, or uninstalled. */
export class AppAccessError extends Error {
  override name = 'AppAccessError';
  constructor(
    readonly code: AppAccessFailure,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The operator's GitHub App, through @octokit/auth-app: JWTs signed with the App's private key (RS256),
 * installation tokens minted from them and cached until shortly before they expire. Every installation
 * token asks for the linked repository only (`repositories`), so a token that leaked could read nothing
 * else the installation covers.
 */
export class GithubApp {
  private readonly auth: ReturnType<typeof createAppAuth>;
  private readonly request: typeof octokitRequest;

  constructor(options: { appId: string; privateKey: string; apiUrl: string }) {
    this.request = octokitRequest.defaults({
      baseUrl: options.apiUrl.replace(/(?<!\/)\/+$/, ''),
      headers: { 'user-agent': 'atskills-hub' },
    });
    this.auth = createAppAuth({
      appId: options.appId,
      privateKey: options.privateKey,
      request: this.request,
    });
  }

  /** The installation that covers `owner/repo`, found with the App's JWT (GET /repos/{o}/{r}/installation). */
  async installationFor(owner: string, repo: string): Promise<{ id: number; account: string }> {
    const { token } = await this.auth({ type: 'app' });
    try {
      const answer = await this.request('GET /repos/{owner}/{repo}/installation', {
        owner,
        repo,
        headers: { authorization: `bearer ${token}` },
      });
      if (answer.data.suspended_at) {
        throw new AppAccessError('installation-suspended', 'The App installation is suspended.');
      }
      const account = answer.data.account as { login?: string } | null;
      return { id: answer.data.id, account: account?.login ?? owner };
    } catch (error) {
      if (error instanceof RequestError && error.status === 404) {
        throw new AppAccessError('app-not-installed', `The App is not installed on ${owner}/${repo}.`);
      }
      throw error;
    }
  }

  /** An installation token for one repository of an installation (cached by @octokit/auth-app). */
  async tokenFor(
    installationId: number,
    repo: string,
    options: { refresh?: boolean } = {},
  ): Promise<InstallationToken> {
    try {
      const auth = await this.auth({
        type: 'installation',
        installationId,
        repositoryNames: [repo],
        ...(options.refresh ? { refresh: true } : {}),
      });
      return { token: auth.token, expiresAt: auth.expiresAt };
    } catch (error) {
      if (error instanceof RequestError && error.status === 404) {
        throw new AppAccessError('installation-revoked', 'The App installation no longer exists.');
      }
      if (error instanceof RequestError && error.status === 403 && !isRateLimitAnswer(error)) {
        throw new AppAccessError('installation-suspended', 'The App installation is suspended.');
      }
      if (error instanceof RequestError && error.status === 422) {
        throw new AppAccessError('app-not-installed', `The App installation does not cover ${repo}.`);
      }
      throw error;
    }
  }
}
