import { randomBytes } from 'node:crypto';
import { LINK_REFRESH_MS, runRecrawlTick } from '@atskills/crawler';
import { loadGithubAuthSettings, TokenKeyring } from '@atskills/github-auth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packCollection, skillMd } from '../../../test/fixtures/archives/make.js';
import { runCli as runHubCli } from '../src/cli.js';
import { createLinkedHub, LINK_QUEUE_MODES, type LinkedHub, link, linkWithApp } from './links-fixtures.js';
import { auth, publish, seedTeam, type Tokens } from './teams-fixtures.js';

/**
 * Issue 17 end to end: a team owner links a private repository with a fine-grained token or the GitHub
 * App, the crawler's link index stores it under hub:<team>/<collection>, members resolve it with one 304
 * per use, pushes make new revisions (old ones stay fetchable), and a credential that stops working
 * leaves members the last good revision, marked stale, while the owners are told. Every test runs on both
 * link queues: the crawler's in-process queue and BullMQ on Redis.
 */
let t: LinkedHub;
let tokens: Tokens;

describe.each(LINK_QUEUE_MODES)('on the %s queue', (mode) => {
  beforeAll(async () => {
    t = await createLinkedHub(`links_flow_${mode.replace('-', '_')}`, {}, mode);
    tokens = await seedTeam(t.hub.db.db, 'acme');
    await t.addRepo('acme-gh/playbooks', {
      'README.md': '# not a skill\n',
      'skills/deploy/SKILL.md': skillMd('deploy', 'Deploy the acme services safely.'),
      'skills/deploy/checklist.md': '- [ ] tag\n',
      'skills/rollback/SKILL.md': skillMd('rollback', 'Roll back a bad acme release.'),
      'skills/broken/SKILL.md': '---\nname: [unclosed\n---\n',
    });
  });
  afterAll(() => t?.close());

  const get = (url: string, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'GET', url, headers });

  describe('a token link', () => {
    let patToken: string;
    /** Links acme-gh/playbooks (its `skills` folder unless null) as hub:acme/playbooks with `credential`. */
    const linkPlaybooks = (
      credential: Record<string, string>,
      headers: Record<string, string>,
      folder: string | null = 'skills',
    ) =>
      link(
        t.app,
        'acme',
        { repo: 'acme-gh/playbooks', collection: 'playbooks', ...(folder ? { folder } : {}), credential },
        headers,
      );

    it('refuses a token that cannot read the repository, without echoing it', async () => {
      const wrong = t.github.issueToken(['acme-gh/other']);
      const res = await linkPlaybooks({ kind: 'token', token: wrong }, auth(tokens, 'owner'));
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().code).toBe('link-credential-refused');
      expect(res.body).not.toContain(wrong);
    });

    it('is for owners only', async () => {
      for (const caller of ['publisher', 'reader', 'outsider'] as const) {
        const res = await linkPlaybooks(
          { kind: 'token', token: 'github_pat_xxxxxxxxxxxxxxxxxxxxxxxx' },
          auth(tokens, caller),
          null,
        );
        expect(res.statusCode).toBe(403);
      }
      const anonymous = await linkWithApp(t.app, 'acme', 'a/b', 'c', {});
      expect(anonymous.statusCode).toBe(401);
    });

    it('links, indexes and shows only the last four characters of the token', async () => {
      patToken = t.github.issueToken(['acme-gh/playbooks']);
      const res = await linkPlaybooks(
        { kind: 'token', token: patToken, expiresAt: '2027-01-31T00:00:00Z' },
        auth(tokens, 'owner'),
      );
      expect(res.statusCode, res.body).toBe(201);
      expect(res.body).not.toContain(patToken);
      expect(res.json()).toMatchObject({
        identity: 'hub:acme/playbooks',
        repository: 'acme-gh/playbooks',
        folder: 'skills',
        visibility: 'private',
        credential: { kind: 'token', last4: patToken.slice(-4), expiresAt: '2027-01-31T00:00:00.000Z' },
      });
      const list = await get('/v1/teams/acme/links', auth(tokens, 'owner'));
      expect(list.statusCode).toBe(200);
      const [view] = list.json().links;
      expect(view.status).toBe('indexed');
      expect(view.headCommit).toMatch(/^[0-9a-f]{40}$/);
      expect(view.problems).toEqual([
        expect.objectContaining({ path: 'skills/broken/SKILL.md', code: 'invalid-yaml' }),
      ]);
      expect(list.body).not.toContain(patToken);
      const stored = await t.hub.db.db.execute('select token_sealed from repository_links' as never);
      expect(JSON.stringify(stored)).not.toContain(patToken.slice(11));
    });

    it('serves the skills to members with revision headers and a 304 per use', async () => {
      const first = await get('/v1/skills/hub:acme/playbooks/deploy', auth(tokens, 'reader'));
      expect(first.statusCode, first.body).toBe(200);
      expect(first.json()).toMatchObject({ name: 'deploy', description: 'Deploy the acme services safely.' });
      expect(first.json().files.map((f: { path: string }) => f.path)).toEqual(['SKILL.md', 'checklist.md']);
      const etag = first.headers.etag as string;
      const again = await get('/v1/skills/hub:acme/playbooks/deploy', {
        ...auth(tokens, 'reader'),
        'if-none-match': etag,
      });
      expect(again.statusCode).toBe(304);
      const menu = await get('/v1/skills/hub:acme/playbooks', auth(tokens, 'reader'));
      // As in a public crawl, a SKILL.md that does not parse stays listed (and out of search) with its problem.
      expect(menu.json().items.map((i: { identity: string }) => i.identity)).toEqual([
        'hub:acme/playbooks/broken',
        'hub:acme/playbooks/deploy',
        'hub:acme/playbooks/rollback',
      ]);
      const search = await get('/search?q=acme%20release', auth(tokens, 'reader'));
      expect(search.json().results.map((r: { identity: string }) => r.identity)).toContain(
        'hub:acme/playbooks/rollback',
      );
      expect((await get('/v1/skills/hub:acme/playbooks/deploy')).statusCode).toBe(404);
    });

    it('follows pushes: the collection revision is the commit, old skill revisions stay fetchable', async () => {
      const before = await get('/v1/skills/hub:acme/playbooks/deploy', auth(tokens, 'reader'));
      const oldRevision = before.json().revision as string;
      const rollbackBefore = await get('/v1/skills/hub:acme/playbooks/rollback', auth(tokens, 'reader'));
      const head = await t.push('acme-gh/playbooks', {
        'skills/deploy/SKILL.md': skillMd('deploy', 'Deploy the acme services safely, with canaries.'),
      });
      await t.index(await linkId('playbooks'));
      const after = await get('/v1/skills/hub:acme/playbooks/deploy', auth(tokens, 'reader'));
      expect(after.json().description).toContain('canaries');
      expect(after.json().revision).not.toBe(oldRevision);
      const old = await get(
        `/v1/skills/hub:acme/playbooks/deploy?rev=${oldRevision}`,
        auth(tokens, 'reader'),
      );
      expect(old.statusCode).toBe(200);
      expect(old.json().description).toBe('Deploy the acme services safely.');
      const revisions = await get('/v1/collections/acme/playbooks/revisions', auth(tokens, 'reader'));
      expect(revisions.json().currentRevision).toBe(head);
      expect(revisions.json().revisions).toHaveLength(2);
      // An untouched skill keeps its revision (and its members' caches their 304s).
      const rollback = await get('/v1/skills/hub:acme/playbooks/rollback', auth(tokens, 'reader'));
      expect(rollback.json().revision).toBe(rollbackBefore.json().revision);
    });

    it('refuses uploads over a linked collection', async () => {
      const res = await publish(
        t.app,
        'acme/playbooks',
        packCollection({ 'x/SKILL.md': skillMd('x', 'x') }),
        auth(tokens, 'publisher'),
      );
      expect(res.statusCode).toBe(409);
      expect(res.json().code).toBe('collection-linked');
    });

    it('a revoked token fails the link, tells the owners, and keeps the last good revision for members (stale)', async () => {
      const live = await get('/v1/skills/hub:acme/playbooks/deploy', auth(tokens, 'reader'));
      t.github.revokeToken(patToken);
      expect(await t.index(await linkId('playbooks'))).toBe('failed');
      const status = await get('/v1/teams/acme/links/playbooks', auth(tokens, 'reader'));
      expect(status.json()).toMatchObject({
        status: 'failed',
        stale: true,
        failure: { code: 'credential-refused' },
      });
      const audit = await get('/admin/namespaces/acme/audit', auth(tokens, 'owner'));
      expect(audit.json().entries.map((e: { action: string }) => e.action)).toContain('link.failed');
      const stale = await get('/v1/skills/hub:acme/playbooks/deploy', auth(tokens, 'reader'));
      expect(stale.statusCode).toBe(200);
      expect(stale.json().warnings).toContain('link-stale');
      expect(stale.headers.etag).toBe(live.headers.etag);
      const probe = await get('/v1/skills/hub:acme/playbooks/deploy', {
        ...auth(tokens, 'reader'),
        'if-none-match': live.headers.etag as string,
      });
      expect(probe.statusCode).toBe(304);
      // A second failure for the same reason does not repeat the audit entry.
      await t.index(await linkId('playbooks'));
      const again = await get('/admin/namespaces/acme/audit', auth(tokens, 'owner'));
      expect(again.json().entries.filter((e: { action: string }) => e.action === 'link.failed')).toHaveLength(
        1,
      );
    });
  });

  describe('scheduled refresh', () => {
    it('a tick queues the links not indexed for 15 minutes, once', async () => {
      const queued: number[] = [];
      const later = () => new Date(Date.now() + LINK_REFRESH_MS + 60_000);
      const deps = {
        db: t.hub.db.db,
        startRun: async () => 0,
        indexLink: async (id: number) => void queued.push(id),
        clock: later,
      };
      await runRecrawlTick(deps);
      expect(queued).toContain(await linkId('playbooks'));
      const again = queued.length;
      await runRecrawlTick(deps);
      expect(queued.length).toBe(again);
    });
  });

  describe('token keys', () => {
    it('rotate: the operator re-seals stored tokens with a new first key, after which the old key can go', async () => {
      const newKey = `k2:${randomBytes(32).toString('base64')}`;
      const env = { ...t.env, LINK_TOKEN_KEYS: `${newKey},${t.env.LINK_TOKEN_KEYS}` };
      let out = '';
      const code = await runHubCli(['admin', 'rotate-link-keys', '--json'], {
        database: t.hub.db,
        env,
        stdout: (s) => (out += s),
        stderr: () => {},
      });
      expect(code).toBe(0);
      expect(JSON.parse(out)).toEqual({ resealed: 1, keyId: 'k2' });
      const rows = (await t.hub.db.db.execute(
        'select token_key_id, token_sealed from repository_links where token_sealed is not null' as never,
      )) as unknown as { rows: { token_key_id: string; token_sealed: string }[] };
      const [row] = rows.rows;
      expect(row?.token_key_id).toBe('k2');
      const onlyNew = new TokenKeyring(loadGithubAuthSettings({ LINK_TOKEN_KEYS: newKey }).tokenKeys);
      expect(onlyNew.open({ keyId: 'k2', sealed: row?.token_sealed ?? '' }, 'hub:acme/playbooks')).toMatch(
        /^github_pat_/,
      );
    });
  });

  describe('an App link', () => {
    it('needs the App installed and the repository naming the team, then indexes with a token scoped to it', async () => {
      await t.addRepo('acme-gh/runbooks', { 'pager/SKILL.md': skillMd('pager', 'Answer the acme pager.') });
      await t.addRepo('acme-gh/other', { 'x/SKILL.md': skillMd('x', 'Other.') });
      const installation = t.github.install('acme-gh', ['acme-gh/runbooks', 'acme-gh/other']);
      const res = await linkWithApp(t.app, 'acme', 'acme-gh/runbooks', 'runbooks', auth(tokens, 'owner'));
      expect(res.statusCode, res.body).toBe(201);
      const status = await get('/v1/teams/acme/links/runbooks', auth(tokens, 'owner'));
      expect(status.json()).toMatchObject({ status: 'failed', failure: { code: 'link-not-authorized' } });
      expect(status.json().failure.message).toContain('.atskills-link');

      await t.push('acme-gh/runbooks', {
        '.atskills-link': '# teams that may link this repository\nhub:acme\n',
      });
      expect(await t.index(await linkId('runbooks'))).toBe('indexed');
      const view = await get('/v1/teams/acme/links/runbooks', auth(tokens, 'owner'));
      expect(view.json()).toMatchObject({
        status: 'indexed',
        credential: { kind: 'app', installationId: installation.id },
      });
      expect(
        t.github.mintLog.every(
          (m) => m.repositories.length === 1 && m.repositories[0] === 'acme-gh/runbooks',
        ),
      ).toBe(true);
      const skill = await get('/v1/skills/hub:acme/runbooks/pager', auth(tokens, 'reader'));
      expect(skill.statusCode).toBe(200);
    });

    it('another team cannot link a repository that does not name it, and learns nothing about the installation', async () => {
      const outsider = auth(tokens, 'outsider');
      const rival = await linkWithApp(t.app, 'acme-rivals', 'acme-gh/runbooks', 'stolen', outsider);
      expect(rival.statusCode).toBe(201);
      const missing = await linkWithApp(t.app, 'acme-rivals', 'acme-gh/nothing-here', 'ghost', outsider);
      expect(missing.statusCode).toBe(201);
      const stolen = (await get('/v1/teams/acme-rivals/links/stolen', auth(tokens, 'outsider'))).json();
      const ghost = (await get('/v1/teams/acme-rivals/links/ghost', auth(tokens, 'outsider'))).json();
      expect(stolen.failure.code).toBe('link-not-authorized');
      expect(ghost.failure.code).toBe(stolen.failure.code);
      expect(
        (await get('/v1/skills/hub:acme-rivals/stolen/pager', auth(tokens, 'outsider'))).statusCode,
      ).toBe(404);
    });
  });

  describe('App webhooks', () => {
    let url: string;
    beforeAll(async () => {
      url = `${await t.app.listen({ host: '127.0.0.1', port: 0 })}/v1/webhooks/github-app`;
    });
    const repository = (fullName: string) => ({
      id: 1,
      name: fullName.split('/')[1],
      full_name: fullName,
      private: true,
      default_branch: 'main',
      owner: { login: fullName.split('/')[0] },
    });

    it('a signed push to the default branch is indexed before the delivery is answered; a bad signature changes nothing', async () => {
      const head = await t.push('acme-gh/runbooks', {
        'pager/SKILL.md': skillMd('pager', 'Answer the acme pager at night.'),
      });
      const forged = await fetch(url, {
        method: 'POST',
        headers: { ...t.github.signDelivery('push', {}, 'not-the-secret-at-all').headers },
        body: JSON.stringify({ ref: 'refs/heads/main', repository: repository('acme-gh/runbooks') }),
      });
      expect(forged.status).toBe(401);
      expect((await get('/v1/teams/acme/links/runbooks', auth(tokens, 'owner'))).json().headCommit).not.toBe(
        head,
      );

      const started = Date.now();
      const answer = await t.github.deliver(url, 'push', {
        ref: 'refs/heads/main',
        repository: repository('acme-gh/runbooks'),
      });
      expect(answer.status, answer.body).toBe(200);
      // Only acme's link follows the repository: the rival's, which its marker never allowed, does not.
      expect(JSON.parse(answer.body)).toEqual({ event: 'push', reindexed: 1, failed: 0 });
      expect(Date.now() - started).toBeLessThan(10_000);
      const skill = await get('/v1/skills/hub:acme/runbooks/pager', auth(tokens, 'reader'));
      expect(skill.json().description).toBe('Answer the acme pager at night.');
      const other = await t.github.deliver(url, 'push', {
        ref: 'refs/heads/feature',
        repository: repository('acme-gh/runbooks'),
      });
      expect(JSON.parse(other.body)).toMatchObject({ reindexed: 0 });
    });

    it('an uninstalled App fails its links at once (stale for members, owners told)', async () => {
      const view = (await get('/v1/teams/acme/links/runbooks', auth(tokens, 'owner'))).json();
      // The delivery is checked with GitHub (SPEC 2.8): the installation must really be gone.
      t.github.uninstall(view.credential.installationId);
      const answer = await t.github.deliver(url, 'installation', {
        action: 'deleted',
        installation: { id: view.credential.installationId },
      });
      expect(JSON.parse(answer.body)).toMatchObject({ failed: 1 });
      expect((await get('/v1/teams/acme/links/runbooks', auth(tokens, 'reader'))).json()).toMatchObject({
        status: 'failed',
        stale: true,
        failure: { code: 'installation-revoked' },
      });
      expect(
        (await get('/v1/skills/hub:acme/runbooks/pager', auth(tokens, 'reader'))).json().warnings,
      ).toContain('link-stale');
    });
  });
});

async function linkId(collection: string): Promise<number> {
  const rows = (await t.hub.db.db.execute(
    `select l.id from repository_links l join collections c on c.id = l.collection_id where c.name = '${collection}'` as never,
  )) as unknown as { rows: { id: string }[] };
  return Number(rows.rows[0]?.id);
}
