import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { skillMd } from '../../../test/fixtures/archives/make.js';
import { OPERATOR, removeMember } from '../src/services/auth/accounts.js';
import { createLinkedHub, type LinkedHub, link } from './links-fixtures.js';
import { auth, type Caller, seedTeam, type Tokens } from './teams-fixtures.js';

/**
 * The access matrix of teams-access.test.ts for collections linked from private GitHub repositories, one
 * linked with a fine-grained token and one with the GitHub App: every read path answers callers who may
 * not see them exactly as for collections that do not exist, and so it stays when a member is removed,
 * a repository unlinked, the App installation revoked or the token revoked.
 */
let t: LinkedHub;
let tokens: Tokens;
let pat: string;
let installationId: number;
let statsBefore: unknown;
let hubUrl: string;

const MEMBERS: Caller[] = ['reader', 'publisher', 'owner', 'admin'];
const NON_MEMBERS: Caller[] = ['anonymous', 'outsider', 'no-read-scope'];
const SECRET_WORD = 'quetzalrotation';

beforeAll(async () => {
  // On BullMQ (links-flow and links-authorization run on both queues; links-cli on the in-process one).
  t = await createLinkedHub('links_access', {}, 'bullmq');
  tokens = await seedTeam(t.hub.db.db, 'acme');
  statsBefore = (await send('outsider', 'GET', '/v1/stats')).json();
  hubUrl = await t.app.listen({ host: '127.0.0.1', port: 0 });
  const files = (extra: Record<string, string> = {}) => ({
    'keys/SKILL.md': skillMd('keys', `Rotate ${SECRET_WORD} signing keys.`),
    'keys/notes.md': 'private notes\n',
    'certs/SKILL.md': skillMd('certs', 'Renew private certificates.'),
    ...extra,
  });
  await t.addRepo('acme-gh/vault', files());
  await t.addRepo('acme-gh/appvault', files({ '.atskills-link': 'hub:acme\n' }));
  pat = t.github.issueToken(['acme-gh/vault']);
  installationId = t.github.install('acme-gh', ['acme-gh/appvault']).id;
  for (const [collection, repo, credential] of [
    ['vault', 'acme-gh/vault', { kind: 'token', token: pat }],
    ['appvault', 'acme-gh/appvault', { kind: 'app' }],
  ] as const) {
    const res = await link(t.app, 'acme', { repo, collection, credential }, auth(tokens, 'owner'));
    if (res.statusCode !== 201) throw new Error(`link ${collection}: ${res.body}`);
    const status = await send('owner', 'GET', `/v1/teams/acme/links/${collection}`);
    if (status.json().status !== 'indexed') throw new Error(`index ${collection}: ${status.body}`);
  }
});
afterAll(() => t?.close());

function send(caller: Caller, method: 'GET' | 'POST', url: string, payload?: unknown) {
  return t.app.inject({
    method,
    url,
    headers: { ...auth(tokens, caller), ...(payload ? { 'content-type': 'application/json' } : {}) },
    ...(payload ? { payload: JSON.stringify(payload) } : {}),
  });
}

/** Every read path for a collection name (`vault`, `appvault`, or a missing `vaulz`). */
const READ_PATHS: { name: string; url: (collection: string) => string }[] = [
  { name: 'skill', url: (c) => `/v1/skills/hub:acme/${c}/keys` },
  { name: 'menu', url: (c) => `/v1/skills/hub:acme/${c}` },
  {
    name: 'pinned revision',
    url: (c) => `/v1/skills/hub:acme/${c}/keys?rev=0000000000000000000000000000000000000000`,
  },
  { name: 'archive', url: (c) => `/v1/archive/hub:acme/${c}/keys` },
  { name: 'file', url: (c) => `/v1/files/hub:acme/${c}/keys?path=notes.md` },
  { name: 'compat SKILL.md', url: (c) => `/api/skills/acme/${c}/keys` },
  { name: 'compat menu', url: (c) => `/api/skills?prefix=acme/${c}/` },
  { name: 'revisions', url: (c) => `/v1/collections/acme/${c}/revisions` },
  { name: 'link status', url: (c) => `/v1/teams/acme/links/${c}` },
  { name: 'web page', url: (c) => `/s/hub:acme/${c}/keys` },
];

/** An answer with the collection's name and per-request ids blanked, headers included. */
function shape(res: LightMyRequestResponse, name: string) {
  const blank = (text: string) =>
    text
      .replaceAll(name, '<name>')
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>');
  let body = blank(res.body);
  try {
    const json = JSON.parse(body) as Record<string, unknown>;
    delete json.requestId;
    delete json.instance;
    body = JSON.stringify(json);
  } catch {
    // not JSON
  }
  const headers = Object.keys(res.headers)
    .filter((h) => !['date', 'x-request-id', 'content-length'].includes(h))
    .sort()
    .map((h) => `${h}: ${blank(String(res.headers[h]))}`);
  return { status: res.statusCode, headers, body };
}

/** Expects the caller to see no trace of `collection`: the answers of the missing `vaulz`, byte for byte. */
async function expectHidden(caller: Caller, collection: string) {
  for (const path of READ_PATHS) {
    const hidden = await send(caller, 'GET', path.url(collection));
    const missing = await send(caller, 'GET', path.url('vaulz'));
    expect(shape(hidden, collection), `${path.name} for ${caller}`).toEqual(shape(missing, 'vaulz'));
    expect(hidden.body).not.toContain(SECRET_WORD);
    expect(hidden.headers.etag).toBeUndefined();
  }
  const search = await send(caller, 'GET', `/search?q=${SECRET_WORD}&limit=100`);
  expect(search.statusCode).toBe(200);
  expect(search.body).not.toMatch(new RegExp(`acme/${collection}|${SECRET_WORD}`));
  const resolve = await send(caller, 'POST', '/v1/resolve', {
    items: [{ identity: `hub:acme/${collection}/keys` }, { identity: 'hub:acme/vaulz/keys' }],
  });
  const [hiddenItem, missingItem] = resolve.json().items;
  expect({ ...hiddenItem, identity: '' }).toEqual({ ...missingItem, identity: '' });
  const home = await send(caller, 'GET', `/?q=${SECRET_WORD}`);
  expect(home.body).not.toContain(`acme/${collection}`);
  // MCP: the same tools answer the same for the linked collection and a missing one.
  const mcp = await mcpClient(caller);
  try {
    const missingCalls = mcpCalls('vaulz');
    for (const [i, [name, args]] of mcpCalls(collection).entries()) {
      const hiddenAnswer = await mcp.callTool({ name, arguments: args });
      const missingAnswer = await mcp.callTool({ name, arguments: missingCalls[i]?.[1] ?? {} });
      expect(JSON.stringify(hiddenAnswer).replaceAll(collection, '<name>'), `mcp ${name} for ${caller}`).toBe(
        JSON.stringify(missingAnswer).replaceAll('vaulz', '<name>'),
      );
    }
  } finally {
    await mcp.close();
  }
}

/** The MCP tool calls that read a collection. */
function mcpCalls(collection: string): [string, Record<string, unknown>][] {
  return [
    ['resolve_skill', { identity: `hub:acme/${collection}/keys` }],
    ['resolve_skill', { identity: `hub:acme/${collection}` }],
    ['read_skill_file', { identity: `hub:acme/${collection}/keys`, path: 'notes.md' }],
    ['search_skills', { query: collection === 'vaulz' ? 'vaulz' : SECRET_WORD }],
  ];
}

async function mcpClient(caller: Caller): Promise<Client> {
  const client = new Client({ name: 'links-access', version: '1.0.0' });
  const headers: Record<string, string> = auth(tokens, caller);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${hubUrl}/mcp`), { requestInit: { headers } }),
  );
  return client;
}

describe.each(['vault', 'appvault'])('linked collection %s', (collection) => {
  it.each(MEMBERS)('%s reads it on every path', async (caller) => {
    for (const path of READ_PATHS) {
      if (path.name === 'pinned revision') continue;
      const res = await send(caller, 'GET', path.url(collection));
      expect(res.statusCode, `${path.name}: ${res.body}`).toBe(200);
    }
    const search = await send(caller, 'GET', `/search?q=${SECRET_WORD}&limit=100`);
    expect(search.json().results.map((r: { identity: string }) => r.identity)).toContain(
      `hub:acme/${collection}/keys`,
    );
  });

  it('members read it through MCP', async () => {
    const mcp = await mcpClient('reader');
    try {
      const answer = (await mcp.callTool({
        name: 'resolve_skill',
        arguments: { identity: `hub:acme/${collection}/keys` },
      })) as {
        structuredContent?: { name?: string };
      };
      expect(answer.structuredContent?.name).toBe('keys');
    } finally {
      await mcp.close();
    }
  });

  it.each(NON_MEMBERS)('%s finds no trace of it', async (caller) => {
    await expectHidden(caller, collection);
  });

  it('does not change what outsiders count in the stats', async () => {
    expect((await send('outsider', 'GET', '/v1/stats')).json()).toEqual(statsBefore);
  });
});

describe('when access ends', () => {
  it('a member removed from the team sees what outsiders see', async () => {
    expect((await send('reader', 'GET', '/v1/skills/hub:acme/vault/keys')).statusCode).toBe(200);
    await removeMember(
      t.hub.db.db,
      { team: 'acme', user: 'acme-reader' },
      { authority: OPERATOR, now: new Date(), requestId: 'test' },
    );
    await expectHidden('reader', 'vault');
    await expectHidden('reader', 'appvault');
  });

  it('a revoked App installation fails the link; members keep the last good revision (stale), outsiders still see nothing', async () => {
    t.github.uninstall(installationId);
    const linkId = (await send('owner', 'GET', '/v1/teams/acme/links'))
      .json()
      .links.find((l: { identity: string }) => l.identity === 'hub:acme/appvault');
    expect(linkId).toBeDefined();
    await send('owner', 'POST', '/v1/teams/acme/links/appvault/index');
    const status = (await send('publisher', 'GET', '/v1/teams/acme/links/appvault')).json();
    expect(status).toMatchObject({
      status: 'failed',
      stale: true,
      failure: { code: 'installation-revoked' },
    });
    const skill = await send('publisher', 'GET', '/v1/skills/hub:acme/appvault/keys');
    expect(skill.statusCode).toBe(200);
    expect(skill.json().warnings).toContain('link-stale');
    await expectHidden('outsider', 'appvault');
    await expectHidden('anonymous', 'appvault');
  });

  it('a revoked token fails the link the same way', async () => {
    t.github.revokeToken(pat);
    await send('owner', 'POST', '/v1/teams/acme/links/vault/index');
    const status = (await send('owner', 'GET', '/v1/teams/acme/links/vault')).json();
    expect(status).toMatchObject({ status: 'failed', stale: true, failure: { code: 'credential-refused' } });
    expect((await send('publisher', 'GET', '/v1/skills/hub:acme/vault/keys')).json().warnings).toContain(
      'link-stale',
    );
    await expectHidden('outsider', 'vault');
  });

  it('an unlinked repository answers 410 to members and exactly 404-as-missing to everyone else', async () => {
    const res = await t.app.inject({
      method: 'DELETE',
      url: '/v1/teams/acme/links/appvault',
      headers: auth(tokens, 'owner'),
    });
    expect(res.statusCode, res.body).toBe(200);
    const gone = await send('publisher', 'GET', '/v1/skills/hub:acme/appvault/keys');
    expect(gone.statusCode).toBe(410);
    await expectHidden('outsider', 'appvault');
    await expectHidden('anonymous', 'appvault');
    await expectHidden('reader', 'appvault');
    const rows = await t.hub.db.db.execute(
      'select count(*)::int as n from repository_links where token_sealed is not null' as never,
    );
    expect((rows as unknown as { rows: { n: number }[] }).rows[0]?.n).toBe(1); // only vault's sealed token is left
  });
});
