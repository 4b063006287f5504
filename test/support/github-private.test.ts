import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { AppAccessError, GithubApp } from '@atskills/github-auth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRepo, gitEnv } from './corpus.js';
import { PrivateGithub } from './github-private.js';
import { type GithubStandin, startGithubStandin } from './github-standin.js';

const run = promisify(execFile);

/** `git ls-remote` with an optional token sent the way the crawler sends it (basic auth header). */
async function lsRemote(url: string, token?: string): Promise<boolean> {
  const env = gitEnv(
    token
      ? {
          GIT_CONFIG_COUNT: '1',
          GIT_CONFIG_KEY_0: 'http.extraHeader',
          GIT_CONFIG_VALUE_0: `Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`,
        }
      : {},
  );
  try {
    await run('git', ['ls-remote', url, 'HEAD'], { env: { ...env, GIT_TERMINAL_PROMPT: '0' } });
    return true;
  } catch {
    return false;
  }
}

describe('GitHub stand-in: private repositories, tokens and the App', () => {
  let standin: GithubStandin;
  const github = new PrivateGithub();
  const skill = { 'deploy/SKILL.md': '---\nname: deploy\ndescription: Deploy.\n---\nSteps.\n' };

  beforeAll(async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'standin-private-'));
    await createRepo(root, 'acme/playbooks', skill);
    await createRepo(root, 'acme/secrets', skill);
    await createRepo(root, 'acme/open', skill);
    github.makePrivate('acme/playbooks');
    github.makePrivate('acme/secrets');
    standin = await startGithubStandin({ reposRoot: root, private: github });
  });
  afterAll(() => standin.close());

  const rest = (p: string, token?: string) =>
    fetch(`${standin.apiUrl}${p}`, token ? { headers: { authorization: `token ${token}` } } : {});

  it('answers 404 for a private repository without credentials, on REST, git and in listings', async () => {
    expect((await rest('/repos/acme/playbooks')).status).toBe(404);
    expect((await rest('/repos/acme/missing')).status).toBe(404);
    expect((await rest('/repos/acme/open')).status).toBe(200);
    expect(await lsRemote(`${standin.gitUrl}/acme/playbooks.git`)).toBe(false);
    expect(await lsRemote(`${standin.gitUrl}/acme/open.git`)).toBe(true);
    const listed = (await (await rest('/orgs/acme/repos')).json()) as { full_name: string }[];
    expect(listed.map((r) => r.full_name)).toEqual(['acme/open']);
    const search = (await (await rest('/search/code?q=filename:SKILL.md')).json()) as {
      items: { repository: { full_name: string } }[];
    };
    expect(new Set(search.items.map((i) => i.repository.full_name))).toEqual(new Set(['acme/open']));
  });

  it('lets a fine-grained token read exactly its repositories until it is revoked', async () => {
    const token = github.issueToken(['acme/playbooks']);
    const answer = await rest('/repos/acme/playbooks', token);
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { private: boolean }).private).toBe(true);
    expect((await rest('/repos/acme/secrets', token)).status).toBe(404);
    expect(await lsRemote(`${standin.gitUrl}/acme/playbooks.git`, token)).toBe(true);
    expect(await lsRemote(`${standin.gitUrl}/acme/secrets.git`, token)).toBe(false);
    github.revokeToken(token);
    expect((await rest('/repos/acme/playbooks', token)).status).toBe(401);
    expect(await lsRemote(`${standin.gitUrl}/acme/playbooks.git`, token)).toBe(false);
  });

  it('mints installation tokens only for JWTs signed with the App key, scoped to the asked repositories', async () => {
    const installation = github.install('acme', ['acme/playbooks', 'acme/secrets']);
    const app = new GithubApp({
      appId: github.appId,
      privateKey: github.appPrivateKeyPem,
      apiUrl: standin.apiUrl,
    });
    expect(await app.installationFor('acme', 'playbooks')).toEqual({ id: installation.id, account: 'acme' });
    await expect(app.installationFor('acme', 'open')).rejects.toBeInstanceOf(AppAccessError);

    const { token } = await app.tokenFor(installation.id, 'playbooks');
    expect(github.mintLog.at(-1)).toEqual({
      installationId: installation.id,
      repositories: ['acme/playbooks'],
    });
    expect((await rest('/repos/acme/playbooks', token)).status).toBe(200);
    expect(await lsRemote(`${standin.gitUrl}/acme/playbooks.git`, token)).toBe(true);
    // Scoped: the installation covers acme/secrets too, this token does not.
    expect((await rest('/repos/acme/secrets', token)).status).toBe(404);
    expect(await lsRemote(`${standin.gitUrl}/acme/secrets.git`, token)).toBe(false);

    // A JWT signed with another key is refused.
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
      type: 'pkcs1',
      format: 'pem',
    });
    const impostor = new GithubApp({
      appId: github.appId,
      privateKey: other.toString(),
      apiUrl: standin.apiUrl,
    });
    await expect(impostor.tokenFor(installation.id, 'playbooks')).rejects.toThrow(/JSON web token/);
    await expect(app.tokenFor(installation.id, 'open')).rejects.toMatchObject({ code: 'app-not-installed' });

    // GitHub's secondary rate limit answers 403 too: it says nothing of the installation.
    standin.rateLimitNext({ status: 403, retryAfter: 1, times: 1, pathPrefix: '/app/installations' });
    const limited = await app
      .tokenFor(installation.id, 'secrets', { refresh: true })
      .catch((e: unknown) => e);
    expect(limited).not.toBeInstanceOf(AppAccessError);
    expect(limited).toMatchObject({ status: 403 });

    github.suspend(installation.id);
    expect((await rest('/repos/acme/playbooks', token)).status).toBe(401);
    await expect(app.tokenFor(installation.id, 'secrets', { refresh: true })).rejects.toMatchObject({
      code: 'installation-suspended',
    });
    github.suspend(installation.id, false);
    github.uninstall(installation.id);
    expect(await lsRemote(`${standin.gitUrl}/acme/playbooks.git`, token)).toBe(false);
    await expect(app.tokenFor(installation.id, 'secrets', { refresh: true })).rejects.toMatchObject({
      code: 'installation-revoked',
    });
  });

  it('signs webhook deliveries with the App secret', () => {
    const delivery = github.signDelivery('push', { ref: 'refs/heads/main' });
    expect(delivery.headers['x-github-event']).toBe('push');
    expect(delivery.headers['x-hub-signature-256']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(
      github.signDelivery('push', { ref: 'refs/heads/main' }, 'other').headers['x-hub-signature-256'],
    ).not.toBe(delivery.headers['x-hub-signature-256']);
  });
});
