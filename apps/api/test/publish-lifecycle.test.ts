import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packCollection, skillMd } from '../../../test/fixtures/archives/make.js';
import { createToken, OPERATOR } from '../src/services/auth/accounts.js';
import { createTestHub, type TestHub } from './support/app.js';
import { auth, type Caller, callAs, publish, seedTeam, type Tokens } from './teams-fixtures.js';

/**
 * What a collection's identities, revisions and publish answers say over its life (republished with other
 * skills, reverted, deleted, made private), and who an administrator's token acts as.
 */
let hub: TestHub;
let tokens: Tokens;
let globex: Tokens;
/** A read,publish token of acme's hub administrator: an everyday token, not an admin-scoped one. */
let plainAdmin: string;

const as = (caller: Caller) => auth(tokens, caller);
const get = (url: string, caller: Caller) => hub.app.inject({ method: 'GET', url, headers: as(caller) });
const asPlainAdmin = { authorization: '' };

async function published(
  target: string,
  files: Record<string, string>,
  visibility: 'public' | 'private' = 'private',
  team: Tokens = tokens,
) {
  const res = await publish(hub.app, target, packCollection(files), auth(team, 'publisher'), visibility);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as {
    revision: string;
    unchanged: boolean;
    visibility: string;
    previousVisibility: string | null;
  };
}

beforeAll(async () => {
  hub = await createTestHub('publish_lifecycle');
  tokens = await seedTeam(hub.db.db, 'acme');
  globex = await seedTeam(hub.db.db, 'globex');
  plainAdmin = (
    await createToken(
      hub.db.db,
      { user: 'acme-admin', scopes: ['read', 'publish'] },
      { authority: OPERATOR, now: new Date(), requestId: 'test-setup' },
    )
  ).token;
  asPlainAdmin.authorization = `Bearer ${plainAdmin}`;
});

afterAll(async () => {
  await hub?.close();
});

describe("a hub administrator's token", () => {
  const SECRET = 'quokkalaunchsequence';

  beforeAll(async () => {
    await published(
      'globex/secret',
      { 'launch/SKILL.md': skillMd('launch', `Run the ${SECRET}.`) },
      'private',
      globex,
    );
  });

  it('without the admin scope acts as an ordinary member: no other team’s private reads, search or publish', async () => {
    const headers = asPlainAdmin;
    const me = await hub.app.inject({ method: 'GET', url: '/admin/me', headers });
    expect(me.json()).toMatchObject({ user: 'acme-admin', admin: false, scopes: ['read', 'publish'] });
    const skill = await hub.app.inject({
      method: 'GET',
      url: '/v1/skills/hub:globex/secret/launch',
      headers,
    });
    expect(skill.statusCode).toBe(404);
    const search = await hub.app.inject({ method: 'GET', url: `/v1/search?q=${SECRET}`, headers });
    expect(search.statusCode).toBe(200);
    expect(search.body).not.toContain('globex');
    const put = await publish(
      hub.app,
      'globex/x',
      packCollection({ 'x/SKILL.md': skillMd('x', 'An x.') }),
      headers,
    );
    expect(put.statusCode).toBe(403);
  });

  it('with the admin scope acts on every namespace', async () => {
    const headers = auth(tokens, 'admin');
    const me = await hub.app.inject({ method: 'GET', url: '/admin/me', headers });
    expect(me.json()).toMatchObject({ user: 'acme-admin', admin: true });
    const skill = await hub.app.inject({
      method: 'GET',
      url: '/v1/skills/hub:globex/secret/launch',
      headers,
    });
    expect(skill.statusCode).toBe(200);
    const search = await hub.app.inject({ method: 'GET', url: `/v1/search?q=${SECRET}`, headers });
    expect(search.body).toContain('hub:globex/secret/launch');
    const put = await publish(
      hub.app,
      'globex/x',
      packCollection({ 'x/SKILL.md': skillMd('x', 'An x.') }),
      headers,
    );
    expect(put.statusCode).toBe(200);
  });
});

describe('a folder whose skill is gone but which holds skills now', () => {
  it('answers the menu of what is there, not 410; the gone skill stays fetchable by ?rev=', async () => {
    await published('acme/gone1', { 'tools/SKILL.md': skillMd('tools', 'All the tools.') });
    const old = (await get('/v1/skills/hub:acme/gone1/tools', 'reader')).json() as { revision: string };
    await published('acme/gone1', { 'tools/lint/SKILL.md': skillMd('lint', 'Lint the code.') });

    const menu = await get('/v1/skills/hub:acme/gone1/tools', 'reader');
    expect(menu.statusCode, menu.body).toBe(200);
    expect(menu.json()).toMatchObject({
      kind: 'menu',
      items: [expect.objectContaining({ identity: 'hub:acme/gone1/tools/lint' })],
    });
    const compat = await get('/api/skills?prefix=acme/gone1/tools/', 'reader');
    expect(compat.statusCode, compat.body).toBe(200);
    expect(compat.body).toContain('acme/gone1/tools/lint');
    const batch = await callAs(hub.app, tokens, 'reader', 'POST', '/v1/resolve', {
      items: [{ identity: 'hub:acme/gone1/tools' }],
    });
    expect(batch.json().items[0]).toMatchObject({ status: 'changed', kind: 'menu' });

    const pinned = await get(`/v1/skills/hub:acme/gone1/tools?rev=${old.revision}`, 'reader');
    expect(pinned.statusCode).toBe(200);
    expect(pinned.json()).toMatchObject({ kind: 'skill', name: 'tools' });
    // Outsiders still learn nothing.
    expect((await get('/v1/skills/hub:acme/gone1/tools', 'outsider')).statusCode).toBe(404);
  });

  it('a root skill replaced by sub-skills: the collection is their menu', async () => {
    await published('acme/rootx', { 'SKILL.md': skillMd('rootx', 'The root.') });
    await published('acme/rootx', {
      'a/SKILL.md': skillMd('a', 'Skill a.'),
      'b/SKILL.md': skillMd('b', 'Skill b.'),
    });
    const menu = await get('/v1/skills/hub:acme/rootx', 'reader');
    expect(menu.statusCode, menu.body).toBe(200);
    expect(menu.json().items.map((i: { identity: string }) => i.identity)).toEqual([
      'hub:acme/rootx/a',
      'hub:acme/rootx/b',
    ]);
  });
});

describe('a deleted collection', () => {
  it("answers 410 for the collection's own identity to members, 404 to others", async () => {
    await published('acme/c1', { 'one/SKILL.md': skillMd('one', 'Skill one.') });
    const del = await callAs(hub.app, tokens, 'publisher', 'DELETE', '/v1/collections/acme/c1');
    expect(del.statusCode).toBe(200);
    const gone = await get('/v1/skills/hub:acme/c1', 'reader');
    expect(gone.statusCode, gone.body).toBe(410);
    expect(gone.json()).toMatchObject({ code: 'gone', identity: 'hub:acme/c1' });
    expect(gone.json().lastRevision).toMatch(/^[0-9a-f]{64}$/);
    expect((await get('/v1/skills/hub:acme/c1/one', 'reader')).statusCode).toBe(410);
    for (const caller of ['outsider', 'anonymous'] as const) {
      expect((await get('/v1/skills/hub:acme/c1', caller)).statusCode).toBe(404);
    }
    expect((await get('/v1/skills/hub:acme/never', 'reader')).statusCode).toBe(404);
  });
});

describe('a visibility change with identical content', () => {
  it('is applied and said so: previousVisibility in the answer', async () => {
    const files = { 'v/SKILL.md': skillMd('v', 'Skill v.') };
    const first = await published('acme/vsw', files, 'public');
    expect(first.previousVisibility).toBeNull();
    const again = await published('acme/vsw', files, 'private');
    expect(again).toMatchObject({
      unchanged: true,
      revision: first.revision,
      visibility: 'private',
      previousVisibility: 'public',
    });
    const same = await published('acme/vsw', files, 'private');
    expect(same).toMatchObject({ unchanged: true, previousVisibility: 'private' });
  });
});

describe('the revisions list', () => {
  const revisionsOf = async (target: string, caller: Caller) => {
    const res = await get(`/v1/collections/${target}/revisions`, caller);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { currentRevision: string; revisions: { revision: string }[] };
  };

  it('is newest first by when each revision was made current: a revert puts it on top', async () => {
    const v1 = { 'r/SKILL.md': skillMd('r', 'Version one.') };
    const v2 = { 'r/SKILL.md': skillMd('r', 'Version two.') };
    const a = await published('acme/revs', v1);
    const b = await published('acme/revs', v2);
    const c = await published('acme/revs', v1);
    expect(c.revision).toBe(a.revision);
    const list = await revisionsOf('acme/revs', 'reader');
    expect(list.currentRevision).toBe(a.revision);
    expect(list.revisions.map((r) => r.revision)).toEqual([a.revision, b.revision]);
  });

  it('lists the current revision to whoever sees the collection, even if first published while private', async () => {
    const files = { 'p/SKILL.md': skillMd('p', 'Skill p.') };
    await published('acme/pubrev', files, 'private');
    const pub = await published('acme/pubrev', files, 'public');
    for (const caller of ['anonymous', 'outsider', 'reader'] as const) {
      const list = await revisionsOf('acme/pubrev', caller);
      expect(list.currentRevision).toBe(pub.revision);
      expect(list.revisions.map((r) => r.revision)).toContain(pub.revision);
    }
  });
});

describe('the media type of an upload', () => {
  it('is 415 for a gzip body sent as JSON, before any parser answers 400', async () => {
    const res = await hub.app.inject({
      method: 'PUT',
      url: '/v1/collections/acme/mt?visibility=private',
      headers: { ...as('publisher'), 'content-type': 'application/json' },
      payload: packCollection({ 'm/SKILL.md': skillMd('m', 'Skill m.') }),
    });
    expect(res.statusCode, res.body).toBe(415);
    expect(res.json().code).toBe('unsupported-media-type');
    // Not before the caller is checked: a stranger still gets the 403 first.
    const stranger = await hub.app.inject({
      method: 'PUT',
      url: '/v1/collections/acme/mt?visibility=private',
      headers: { ...as('outsider'), 'content-type': 'text/plain' },
      payload: 'x',
    });
    expect(stranger.statusCode).toBe(403);
  });
});
