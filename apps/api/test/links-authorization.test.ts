import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skillMd } from '../../../test/fixtures/archives/make.js';
import { createLinkedHub, LINK_QUEUE_MODES, type LinkedHub, linkWithApp } from './links-fixtures.js';
import { auth, seedTeam, type Tokens } from './teams-fixtures.js';

/**
 * Issue 24, findings 4 and 5. An App link proves its right to a repository with the repository's
 * `.atskills-link` before anything about the repository is stored or told: another team that links
 * someone's private repository (with a missing folder, an existing one, or a repository that does not
 * exist) gets the one link-not-authorized answer, and its link follows none of the repository's pushes or
 * renames. Link jobs run on both queues (in-process and BullMQ), and a queue that refuses the job never
 * leaves a link `queued` forever.
 */
describe.each(LINK_QUEUE_MODES)('on the %s queue', (mode) => {
  let t: LinkedHub;
  let tokens: Tokens;
  let hookUrl: string;

  beforeAll(async () => {
    t = await createLinkedHub(`links_authz_${mode.replace('-', '_')}`, {}, mode);
    tokens = await seedTeam(t.hub.db.db, 'acme');
    await t.addRepo('victim-gh/private', {
      '.atskills-link': 'hub:acme\n',
      'skills/payroll/SKILL.md': skillMd('payroll', 'Run the victim payroll.'),
    });
    t.github.install('victim-gh', ['victim-gh/private', 'victim-gh/ghost']);
    hookUrl = `${await t.app.listen({ host: '127.0.0.1', port: 0 })}/v1/webhooks/github-app`;
    const own = await linkWithApp(t.app, 'acme', 'victim-gh/private', 'vault', auth(tokens, 'owner'));
    expect(own.statusCode, own.body).toBe(201);
    expect(own.json().status).toBe('indexed');
  });
  afterAll(() => t?.close());

  const status = async (team: string, collection: string) =>
    (
      await t.app.inject({
        method: 'GET',
        url: `/v1/teams/${team}/links/${collection}`,
        headers: auth(tokens, team === 'acme' ? 'owner' : 'outsider'),
      })
    ).json();

  const rows = async () =>
    (
      (await t.hub.db.db.execute(
        `select c.name, l.github_owner, l.github_repo, l.github_repo_id, l.installation_id, l.head_commit, l.status, l.updated_at
         from repository_links l join collections c on c.id = l.collection_id order by c.name` as never,
      )) as unknown as { rows: Record<string, unknown>[] }
    ).rows;

  const rivalLink = (collection: string, repo: string, folder?: string) =>
    linkWithApp(t.app, 'acme-rivals', repo, collection, auth(tokens, 'outsider'), folder);

  it("another team's link of a private repository gets one refusal, whatever the folder or repository", async () => {
    const attempts = [
      ['missing', 'victim-gh/private', 'no-such-folder'],
      ['existing', 'victim-gh/private', 'skills'],
      ['whole', 'victim-gh/private', undefined],
      ['ghost', 'victim-gh/ghost', 'no-such-folder'],
    ] as const;
    const failures = [];
    for (const [collection, repo, folder] of attempts) {
      const res = await rivalLink(collection, repo, folder);
      expect(res.statusCode, res.body).toBe(201);
      const view = await status('acme-rivals', collection);
      expect(view, collection).toMatchObject({
        status: 'failed',
        headCommit: null,
        credential: { kind: 'app', installationId: null },
        failure: { code: 'link-not-authorized' },
      });
      expect(res.body).not.toMatch(/[0-9a-f]{40}|folder-not-found|payroll/);
      expect(JSON.stringify(view)).not.toMatch(/[0-9a-f]{40}|folder-not-found|payroll/);
      failures.push(
        (view.failure.message as string).replaceAll(repo, '<repo>').replace(folder ? `${folder}/` : '', ''),
      );
    }
    // The messages differ only by the folder and repository the rival typed itself.
    expect(new Set(failures).size).toBe(1);
    const stored = (await rows()).filter((r) => r.name !== 'vault');
    expect(stored).toHaveLength(attempts.length);
    for (const row of stored) {
      expect(row, String(row.name)).toMatchObject({
        github_repo_id: null,
        installation_id: null,
        head_commit: null,
      });
    }
    expect((await t.app.inject({ url: '/v1/skills/hub:acme-rivals/existing/payroll' })).statusCode).toBe(404);
  });

  it("the refused links follow none of the repository's pushes or renames", async () => {
    const before = await rows();
    const repoId = Number(before.find((r) => r.name === 'vault')?.github_repo_id);
    expect(repoId).toBeGreaterThan(0);
    const repository = (fullName: string) => ({
      id: repoId,
      name: fullName.split('/')[1],
      full_name: fullName,
      private: true,
      default_branch: 'main',
      owner: { login: fullName.split('/')[0] },
    });
    await t.push('victim-gh/private', {
      'skills/payroll/SKILL.md': skillMd('payroll', 'Run the victim payroll twice.'),
    });
    const push = await t.github.deliver(hookUrl, 'push', {
      ref: 'refs/heads/main',
      repository: repository('victim-gh/private'),
    });
    expect(push.status, push.body).toBe(200);
    expect(JSON.parse(push.body)).toEqual({ event: 'push', reindexed: 1, failed: 0 });
    const renamed = await t.github.deliver(hookUrl, 'repository', {
      action: 'renamed',
      repository: repository('victim-gh/private-renamed'),
    });
    expect(renamed.status, renamed.body).toBe(200);
    const after = await rows();
    for (const row of after.filter((r) => r.name !== 'vault')) {
      const earlier = before.find((r) => r.name === row.name);
      // Not re-indexed (untouched since), not renamed, still knowing nothing of the repository.
      expect(row).toEqual(earlier);
    }
    // The team the marker names follows the push; the rename only once GitHub confirms it (SPEC 2.8), and
    // GitHub still knows the repository as victim-gh/private.
    expect(after.find((r) => r.name === 'vault')).toMatchObject({
      github_repo: 'private',
      github_repo_id: before.find((r) => r.name === 'vault')?.github_repo_id,
    });
  });

  it('a queue that refuses the job answers 503 and leaves the link failed, not queued forever', async () => {
    await t.addRepo('acme-gh/late', { '.atskills-link': 'hub:acme\n', 'x/SKILL.md': skillMd('x', 'Late.') });
    t.github.install('acme-gh', ['acme-gh/late']);
    await t.crawler.close();
    const res = await linkWithApp(t.app, 'acme', 'acme-gh/late', 'late', auth(tokens, 'owner'));
    expect(res.statusCode, res.body).toBe(503);
    expect(res.json()).toMatchObject({ code: 'unavailable' });
    expect(res.json().detail).toMatch(/could not be queued/);
    expect(await status('acme', 'late')).toMatchObject({
      status: 'failed',
      failure: { code: 'index-not-queued' },
    });
    const reindex = await t.app.inject({
      method: 'POST',
      url: '/v1/teams/acme/links/vault/index',
      headers: auth(tokens, 'owner'),
    });
    expect(reindex.statusCode, reindex.body).toBe(503);
  });
});
