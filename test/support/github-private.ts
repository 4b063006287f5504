/**
 * The private side of the GitHub stand-in (test/support/github-standin.ts): private repositories that
 * answer 404 to REST and git without credentials that may read them, fine-grained tokens a test issues
 * and revokes, and a GitHub App with installations whose tokens are minted only for a JWT signed (RS256)
 * with the App's private key and limited to the installation's repositories, plus signed webhook
 * deliveries to the hub. Hand-written for the same reason as the stand-in: no package fakes GitHub's
 * authorization model over a folder of real git repositories.
 */
import {
  createHmac,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  randomUUID,
  verify,
} from 'node:crypto';
import { request } from 'node:http';

/** A fine-grained token a test issued: the repositories it may read. */
interface IssuedToken {
  repos: Set<string>;
  revoked: boolean;
  expiresAt: Date;
}

/** One installation of the App on an account. */
export interface Installation {
  id: number;
  account: string;
  repos: Set<string>;
  suspended: boolean;
  deleted: boolean;
}

interface MintedToken {
  installationId: number;
  repos: Set<string>;
  expiresAt: Date;
}

/** What the REST side answers for a request it owns (the stand-in sends it). */
export interface PrivateAnswer {
  status: number;
  body: unknown;
}

/** A signed webhook delivery as GitHub sends it. */
export interface WebhookDelivery {
  headers: Record<string, string>;
  body: string;
}

const lower = (fullName: string) => fullName.toLowerCase();

/** The private half of the stand-in. */
export class PrivateGithub {
  /** The App's identity, as the operator configures it on the hub (GITHUB_APP_ID / GITHUB_APP_PRIVATE_KEY). */
  readonly appId = '4242';
  readonly appPrivateKeyPem: string;
  private readonly appPublicKey: KeyObject;
  /** The webhook secret of the App (the hub verifies X-Hub-Signature-256 with it). */
  readonly webhookSecret: string;
  private readonly privateRepos = new Set<string>();
  private readonly tokens = new Map<string, IssuedToken>();
  private readonly installations = new Map<number, Installation>();
  private readonly minted = new Map<string, MintedToken>();
  private nextInstallation = 7001;
  /** Every installation token minted (repositories asked for), for scope assertions. */
  readonly mintLog: { installationId: number; repositories: string[] }[] = [];

  constructor(options: { webhookSecret?: string } = {}) {
    // GitHub hands App keys out as PKCS#1 PEM.
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.appPrivateKeyPem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
    this.appPublicKey = createPublicKey(publicKey.export({ type: 'spki', format: 'pem' }));
    this.webhookSecret = options.webhookSecret ?? randomBytes(16).toString('hex');
  }

  /** Makes a repository private: from now on it is only readable with credentials that cover it. */
  makePrivate(fullName: string): void {
    this.privateRepos.add(lower(fullName));
  }

  /** Makes it public again. */
  makePublic(fullName: string): void {
    this.privateRepos.delete(lower(fullName));
  }

  isPrivate(fullName: string): boolean {
    return this.privateRepos.has(lower(fullName));
  }

  /** Issues a fine-grained token that reads these repositories (`github_pat_...`). */
  issueToken(repos: string[], options: { expiresInDays?: number } = {}): string {
    const token = `github_pat_${randomBytes(30).toString('base64url').replace(/[-_]/g, 'x')}`;
    this.tokens.set(token, {
      repos: new Set(repos.map(lower)),
      revoked: false,
      expiresAt: new Date(Date.now() + (options.expiresInDays ?? 30) * 86_400_000),
    });
    return token;
  }

  /** Revokes a fine-grained token: every later request with it is refused. */
  revokeToken(token: string): void {
    const issued = this.tokens.get(token);
    if (issued) issued.revoked = true;
  }

  /** Installs the App on an account for some of its repositories; returns the installation. */
  install(account: string, repos: string[]): Installation {
    const installation: Installation = {
      id: this.nextInstallation++,
      account,
      repos: new Set(repos.map(lower)),
      suspended: false,
      deleted: false,
    };
    this.installations.set(installation.id, installation);
    return installation;
  }

  installation(id: number): Installation | undefined {
    return this.installations.get(id);
  }

  /** Changes which repositories an installation covers (its existing tokens lose the removed ones). */
  setInstallationRepos(id: number, repos: string[]): void {
    const installation = this.installations.get(id);
    if (installation) installation.repos = new Set(repos.map(lower));
  }

  suspend(id: number, suspended = true): void {
    const installation = this.installations.get(id);
    if (installation) installation.suspended = suspended;
  }

  /** Uninstalls the App: the installation and all of its tokens stop working. */
  uninstall(id: number): void {
    const installation = this.installations.get(id);
    if (installation) installation.deleted = true;
  }

  /** The token inside an Authorization header: `token X`, `bearer X` or git's basic `x-access-token:X`. */
  private credentialOf(authorization: string | undefined): string | undefined {
    if (!authorization) return undefined;
    const [scheme = '', value = ''] = authorization.split(' ', 2);
    if (/^basic$/i.test(scheme)) {
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      return decoded.slice(decoded.indexOf(':') + 1);
    }
    return /^(token|bearer)$/i.test(scheme) ? value : undefined;
  }

  /** Whether a credential is one this GitHub knows and still honours. */
  private credentialValid(credential: string): boolean {
    const issued = this.tokens.get(credential);
    if (issued) return !issued.revoked && issued.expiresAt > new Date();
    const minted = this.minted.get(credential);
    if (minted) {
      const installation = this.installations.get(minted.installationId);
      return (
        !!installation && !installation.deleted && !installation.suspended && minted.expiresAt > new Date()
      );
    }
    return false;
  }

  /** Whether the credential may read `fullName` (public repositories: anyone without credentials too). */
  canRead(fullName: string, authorization: string | undefined): boolean {
    const name = lower(fullName);
    const credential = this.credentialOf(authorization);
    if (!this.privateRepos.has(name)) return true;
    if (!credential || !this.credentialValid(credential)) return false;
    const issued = this.tokens.get(credential);
    if (issued) return issued.repos.has(name);
    const minted = this.minted.get(credential);
    const installation = minted ? this.installations.get(minted.installationId) : undefined;
    return !!minted && !!installation && minted.repos.has(name) && installation.repos.has(name);
  }

  /** A bad credential on any request is GitHub's 401 "Bad credentials" (JWTs are checked by the App routes). */
  badCredentials(authorization: string | undefined): boolean {
    const credential = this.credentialOf(authorization);
    if (!credential || credential.split('.').length === 3) return false;
    return !this.credentialValid(credential);
  }

  /** The git server's verdict for a request (test/support/git-server.ts `authorize`): 404 like GitHub. */
  gitVerdict(repo: string, authorization: string | undefined): 200 | 404 {
    return this.canRead(repo, authorization) ? 200 : 404;
  }

  /** Verifies an App JWT (RS256 with the App's key, iss = app id, not expired); the reason when refused. */
  private verifyJwt(authorization: string | undefined): string | null {
    const jwt = this.credentialOf(authorization);
    const parts = jwt?.split('.') ?? [];
    if (parts.length !== 3) return 'A JSON web token could not be decoded';
    const [header = '', payload = '', signature = ''] = parts;
    let claims: { iss?: string | number; exp?: number; iat?: number };
    try {
      const head = JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as { alg?: string };
      if (head.alg !== 'RS256') return "'alg' must be RS256";
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      return 'A JSON web token could not be decoded';
    }
    const signed = verify(
      'RSA-SHA256',
      Buffer.from(`${header}.${payload}`),
      this.appPublicKey,
      Buffer.from(signature, 'base64url'),
    );
    if (!signed) return 'A JSON web token could not be decoded';
    const now = Math.floor(Date.now() / 1000);
    if (String(claims.iss) !== this.appId) return "'Issuer' claim ('iss') must be an Integer";
    if (typeof claims.exp !== 'number' || claims.exp <= now)
      return "'Expiration time' claim ('exp') is too far in the past";
    if (typeof claims.iat === 'number' && claims.iat > now + 60)
      return "'Issued at' claim ('iat') must be an Integer representing a time in the past";
    if (claims.exp - (claims.iat ?? now) > 600)
      return "'Expiration time' claim ('exp') is too far in the future";
    return null;
  }

  /**
   * The App routes: `POST /app/installations/{id}/access_tokens`, `GET /app/installations/{id}`,
   * `GET /repos/{owner}/{repo}/installation`. Undefined for every other request (the stand-in answers it).
   */
  handleAppRoute(
    method: string,
    parts: string[],
    authorization: string | undefined,
    body: string,
  ): PrivateAnswer | undefined {
    const isTokens =
      method === 'POST' &&
      parts[0] === 'app' &&
      parts[1] === 'installations' &&
      parts[3] === 'access_tokens' &&
      parts.length === 4;
    const isInstallation =
      method === 'GET' && parts[0] === 'app' && parts[1] === 'installations' && parts.length === 3;
    const isRepoInstallation =
      method === 'GET' && parts[0] === 'repos' && parts[3] === 'installation' && parts.length === 4;
    if (!isTokens && !isInstallation && !isRepoInstallation) return undefined;
    const refused = this.verifyJwt(authorization);
    if (refused)
      return { status: 401, body: { message: refused, documentation_url: 'https://docs.github.com/rest' } };
    const notFound = {
      status: 404,
      body: { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' },
    };

    if (isRepoInstallation) {
      const name = lower(`${parts[1]}/${parts[2]}`);
      const found = [...this.installations.values()].find((i) => !i.deleted && i.repos.has(name));
      return found ? { status: 200, body: this.installationBody(found) } : notFound;
    }
    const installation = this.installations.get(Number(parts[2]));
    if (!installation || installation.deleted) return notFound;
    if (isInstallation) return { status: 200, body: this.installationBody(installation) };
    if (installation.suspended) {
      return {
        status: 403,
        body: {
          message: 'This installation has been suspended',
          documentation_url: 'https://docs.github.com/rest',
        },
      };
    }
    let wanted: string[] = [];
    try {
      const parsed = body ? (JSON.parse(body) as { repositories?: string[] }) : {};
      wanted = parsed.repositories ?? [];
    } catch {
      return { status: 400, body: { message: 'Problems parsing JSON' } };
    }
    const full = wanted.map((r) => lower(r.includes('/') ? r : `${installation.account}/${r}`));
    if (full.some((r) => !installation.repos.has(r))) {
      return {
        status: 422,
        body: {
          message:
            'There is at least one repository that does not exist or is not accessible to the parent installation.',
        },
      };
    }
    const scope = full.length > 0 ? new Set(full) : new Set(installation.repos);
    const token = `ghs_${randomBytes(27).toString('base64url').replace(/[-_]/g, 'x')}`;
    const expiresAt = new Date(Date.now() + 3600_000);
    this.minted.set(token, { installationId: installation.id, repos: scope, expiresAt });
    this.mintLog.push({ installationId: installation.id, repositories: [...scope] });
    return {
      status: 201,
      body: {
        token,
        expires_at: expiresAt.toISOString(),
        permissions: { contents: 'read', metadata: 'read' },
        repository_selection: 'selected',
        repositories: [...scope].map((r) => ({
          full_name: r,
          name: r.split('/')[1],
          private: this.isPrivate(r),
        })),
      },
    };
  }

  private installationBody(i: Installation) {
    return {
      id: i.id,
      account: { login: i.account, type: 'Organization' },
      app_id: Number(this.appId),
      repository_selection: 'selected',
      permissions: { contents: 'read', metadata: 'read' },
      events: ['push', 'repository'],
      suspended_at: i.suspended ? new Date().toISOString() : null,
      target_type: 'Organization',
    };
  }

  /** A webhook delivery as GitHub signs it (X-Hub-Signature-256 over the raw body with the App's secret). */
  signDelivery(event: string, payload: unknown, secret = this.webhookSecret): WebhookDelivery {
    const body = JSON.stringify(payload);
    return {
      body,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'GitHub-Hookshot/standin',
        'x-github-event': event,
        'x-github-delivery': randomUUID(),
        'x-github-hook-installation-target-type': 'integration',
        'x-github-hook-installation-target-id': this.appId,
        'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
      },
    };
  }

  /** Delivers a signed webhook to the hub over HTTP (its webhook URL); resolves with the hub's status. */
  async deliver(url: string, event: string, payload: unknown): Promise<{ status: number; body: string }> {
    const delivery = this.signDelivery(event, payload);
    return new Promise((resolve, reject) => {
      const req = request(url, { method: 'POST', headers: delivery.headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
      });
      req.on('error', reject);
      req.end(delivery.body);
    });
  }
}
