import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packCollection, skillMd } from '../../../test/fixtures/archives/make.js';
import { createTestHub, type TestHub } from './support/app.js';
import { auth, type Caller, publish, seedTeam, type Tokens } from './teams-fixtures.js';

/**
 * The access matrix of issue 5: every caller kind against every read path and publish. Callers who may not
 * see a private identity must get exactly what a missing identity gets (status, code, wording), and
 * private names must not show in search, menus, counts or suggestions.
 */
let hub: TestHub;
let tokens: Tokens;

const MEMBERS: Caller[] = ['reader', 'publisher', 'owner', 'admin'];
const NON_MEMBERS: Caller[] = ['anonymous', 'outsider', 'no-read-scope'];
const BAD_TOKENS: Caller[] = ['revoked', 'expired'];
const ALL: Caller[] = [...MEMBERS, ...NON_MEMBERS, ...BAD_TOKENS];

// A word only the private skill holds, to look for it in search answers.
const SECRET_WORD = 'zebrafishrotation';

beforeAll(async () => {
  hub = await createTestHub('teams_access');
  tokens = await seedTeam(hub.db.db, 'acme');
  const pub = (target: string, files: Record<string, string>, visibility: 'public' | 'private') =>
    publish(hub.app, target, packCollection(files), auth(tokens, 'publisher'), visibility).then((r) => {
      if (r.statusCode !== 200) throw new Error(`seed publish ${target}: ${r.body}`);
    });
  await pub(
    'acme/vault',
    {
      'keys/SKILL.md': skillMd('keys', `Rotate ${SECRET_WORD} signing keys.`),
      'keys/notes.md': 'private notes\n',
      'certs/SKILL.md': skillMd('certs', 'Renew private certificates.'),
    },
    'private',
  );
  await pub('acme/secretroot', { 'SKILL.md': skillMd('secretroot', 'A private root skill.') }, 'private');
  await pub('acme/open', { 'hello/SKILL.md': skillMd('hello', 'Say hello to the public.') }, 'public');
});

afterAll(async () => {
  await hub?.close();
});

/** A read path: the request for the private target and the same request for a target that does not exist. */
interface ReadPath {
  name: string;
  request(caller: Caller, which: 'private' | 'missing'): Promise<LightMyRequestResponse>;
}

const send = (caller: Caller, method: 'GET' | 'POST', url: string, payload?: unknown) =>
  hub.app.inject({
    method,
    url,
    headers: { ...auth(tokens, caller), ...(payload ? { 'content-type': 'application/json' } : {}) },
    ...(payload ? { payload: JSON.stringify(payload) } : {}),
  });

const pick = (which: 'private' | 'missing', privateValue: string, missingValue: string) =>
  which === 'private' ? privateValue : missingValue;

const READ_PATHS: ReadPath[] = [
  {
    name: 'GET /v1/skills (skill)',
    request: (c, w) => send(c, 'GET', `/v1/skills/${pick(w, 'hub:acme/vault/keys', 'hub:acme/vaulz/keys')}`),
  },
  {
    name: 'GET /v1/skills (menu)',
    request: (c, w) => send(c, 'GET', `/v1/skills/${pick(w, 'hub:acme/vault', 'hub:acme/vaulz')}`),
  },
  {
    name: 'GET /v1/archive',
    request: (c, w) => send(c, 'GET', `/v1/archive/${pick(w, 'hub:acme/vault/keys', 'hub:acme/vaulz/keys')}`),
  },
  {
    name: 'GET /v1/files',
    request: (c, w) =>
      send(c, 'GET', `/v1/files/${pick(w, 'hub:acme/vault/keys', 'hub:acme/vaulz/keys')}?path=notes.md`),
  },
  {
    name: 'GET /api/skills/<ns>/<name>',
    request: (c, w) => send(c, 'GET', `/api/skills/${pick(w, 'acme/secretroot', 'acme/secretrooz')}`),
  },
  {
    name: 'GET /api/skills?prefix=',
    request: (c, w) => send(c, 'GET', `/api/skills?prefix=${pick(w, 'acme/vault/', 'acme/vaulz/')}`),
  },
  {
    name: 'GET /v1/collections/.../revisions',
    request: (c, w) => send(c, 'GET', `/v1/collections/acme/${pick(w, 'vault', 'vaulz')}/revisions`),
  },
];

/** The answer with the target's name blanked, to compare a private answer with a missing one. */
function shape(res: LightMyRequestResponse, name: string) {
  let body = res.body.replaceAll(name, '<name>');
  try {
    const json = JSON.parse(body) as Record<string, unknown>;
    delete json.requestId;
    delete json.instance;
    body = JSON.stringify(json);
  } catch {
    // not JSON (text compat routes)
  }
  return { status: res.statusCode, type: res.headers['content-type'], body };
}

describe('read paths', () => {
  for (const path of READ_PATHS) {
    describe(path.name, () => {
      it.each(MEMBERS)('%s sees the private content', async (caller) => {
        const res = await path.request(caller, 'private');
        expect(res.statusCode, res.body).toBe(200);
      });

      it.each(NON_MEMBERS)('%s gets exactly the answer of a missing identity', async (caller) => {
        const hidden = await path.request(caller, 'private');
        const missing = await path.request(caller, 'missing');
        expect(hidden.statusCode).toBe(404);
        expect(shape(hidden, 'vault').body.replaceAll('secretroot', '<name>')).toBe(
          shape(missing, 'vaulz').body.replaceAll('secretrooz', '<name>'),
        );
        expect(hidden.body).not.toContain(SECRET_WORD);
      });

      it.each(BAD_TOKENS)('%s token is refused with 401', async (caller) => {
        const res = await path.request(caller, 'private');
        expect(res.statusCode).toBe(401);
        expect(res.json().code).toBe('unauthorized');
        expect(res.headers['www-authenticate']).toContain('Bearer');
        expect(res.body).not.toContain(tokens[caller as 'revoked']);
      });
    });
  }
});

describe('search, resolve and the web page', () => {
  const searchFor = (caller: Caller, q: string) =>
    send(caller, 'GET', `/search?q=${encodeURIComponent(q)}&limit=100`);
  const identitiesIn = (res: LightMyRequestResponse) =>
    (res.json().results as { identity: string }[]).map((r) => r.identity);

  it.each(MEMBERS)('%s finds private skills in search', async (caller) => {
    expect(identitiesIn(await searchFor(caller, SECRET_WORD))).toContain('hub:acme/vault/keys');
  });

  it.each(NON_MEMBERS)(
    '%s finds no trace of private skills in search (results, counts, suggestions)',
    async (caller) => {
      for (const q of [SECRET_WORD, 'private', 'certificates', 'keys', 'vault']) {
        const res = await searchFor(caller, q);
        expect(res.statusCode).toBe(200);
        expect(res.body).not.toMatch(/acme\/vault|acme\/secretroot|zebrafish/);
      }
      // Public content is still there.
      expect(identitiesIn(await searchFor(caller, 'hello public'))).toContain('hub:acme/open/hello');
    },
  );

  it.each(ALL)('POST /v1/resolve for %s', async (caller) => {
    const res = await send(caller, 'POST', '/v1/resolve', {
      items: [
        { identity: 'hub:acme/vault/keys' },
        { identity: 'hub:acme/vaulz/keys' },
        { identity: 'hub:acme/open/hello' },
      ],
    });
    if (BAD_TOKENS.includes(caller)) {
      expect(res.statusCode).toBe(401);
      return;
    }
    expect(res.statusCode).toBe(200);
    const [hidden, missing, open] = res.json().items;
    expect(open.status).toBe('changed');
    if (MEMBERS.includes(caller)) {
      expect(hidden).toMatchObject({ status: 'changed', name: 'keys' });
    } else {
      expect({ ...hidden, identity: '' }).toEqual({ ...missing, identity: '' });
      expect(JSON.stringify(hidden)).not.toContain(SECRET_WORD);
    }
  });

  it.each(ALL)('the web pages for %s', async (caller) => {
    const page = await send(caller, 'GET', '/s/hub:acme/vault/keys');
    const missingPage = await send(caller, 'GET', '/s/hub:acme/vaulz/keys');
    const home = await send(caller, 'GET', `/?q=${SECRET_WORD}`);
    if (BAD_TOKENS.includes(caller)) {
      expect([page.statusCode, home.statusCode]).toEqual([401, 401]);
      return;
    }
    expect(home.statusCode).toBe(200);
    if (MEMBERS.includes(caller)) {
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain(SECRET_WORD);
      expect(home.body).toContain('acme/vault/keys');
    } else {
      expect(page.statusCode).toBe(missingPage.statusCode);
      const withoutIds = (html: string) =>
        html.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<id>');
      expect(withoutIds(page.body.replaceAll('vault', 'vaulz'))).toBe(withoutIds(missingPage.body));
      expect(home.body).not.toContain('acme/vault');
    }
  });
});

describe('publish', () => {
  const expected: Record<Caller, number> = {
    anonymous: 401,
    revoked: 401,
    expired: 401,
    outsider: 403,
    reader: 403,
    'no-publish-scope': 403,
    'no-read-scope': 200,
    publisher: 200,
    owner: 200,
    admin: 200,
  };
  it.each(Object.keys(expected) as Caller[])('%s', async (caller) => {
    const res = await publish(
      hub.app,
      'acme/matrix',
      packCollection({ 'step/SKILL.md': skillMd('step', `Published by ${caller}.`) }),
      auth(tokens, caller),
    );
    expect(res.statusCode, res.body).toBe(expected[caller]);
    if (res.statusCode === 403) {
      // Forbidden reads the same whether or not the namespace exists: nothing to probe.
      const ghost = await publish(
        hub.app,
        'no-such-team/matrix',
        packCollection({ 'x/SKILL.md': skillMd('x', 'x') }),
        auth(tokens, caller),
      );
      if (caller !== 'no-publish-scope') {
        expect(ghost.json().detail.replace('no-such-team', 'acme').replaceAll('no-such-team', 'acme')).toBe(
          res.json().detail,
        );
      }
      expect(ghost.statusCode).toBe(403);
    }
  });
});
