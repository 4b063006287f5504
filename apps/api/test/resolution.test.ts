import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { blobs } from '@atskills/db';
import { eq } from 'drizzle-orm';
import { Parser, type ReadEntry } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestHub, type TestHub } from './support/app.js';
import {
  REMOTE_EXEC_FINDING,
  seedCorpus,
  seedHubCollection,
  seedRepository,
  skillMd,
} from './support/seed.js';

let hub: TestHub;
/** SKILL.md files whose frontmatter does not parse (SPEC 1.1: recorded, out of search, still resolving). */
const UNPARSED = {
  'skills/nofm/SKILL.md': '# Just markdown, no frontmatter\n',
  'skills/noclose/SKILL.md': '---\nname: noclose\ndescription: Never closed\n# Body\n',
  'skills/dup/SKILL.md': '---\nname: dup\nname: dup\ndescription: Twice\n---\n# Dup\n',
  'skills/num/SKILL.md': '---\nname: 123\ndescription: A number\n---\n# Num\n',
};
let oldRevision: string;
let currentRevision: string;

const get = (url: string, headers: Record<string, string> = {}) =>
  hub.app.inject({ method: 'GET', url, headers });

beforeAll(async () => {
  hub = await createTestHub('resolution');
  await seedCorpus(hub.db.db, ['anthropics/skills']);
  // A repository whose skill changes (old revision stays fetchable) and another that disappears (410).
  await seedRepository(hub.db.db, 'acme', 'tools', {
    'deploy/SKILL.md': skillMd('deploy', 'Deploy the service', '# Deploy\n\nv1\n'),
    'deploy/scripts/run.sh': '#!/bin/sh\necho v1\n',
    'lint/SKILL.md': skillMd('lint', 'Lint the code'),
    'retired/SKILL.md': skillMd('retired', 'Will be removed'),
  });
  const first = await get('/v1/skills/gh:acme/tools/deploy');
  oldRevision = first.json().revision;
  await seedRepository(hub.db.db, 'acme', 'tools', {
    'deploy/SKILL.md': skillMd('deploy', 'Deploy the service safely', '# Deploy\n\nv2\n'),
    'deploy/scripts/run.sh': '#!/bin/sh\necho v2\n',
    'deploy/logo.png': { size: 2048 },
    'lint/SKILL.md': skillMd('lint', 'Lint the code'),
  });
  currentRevision = (await get('/v1/skills/gh:acme/tools/deploy')).json().revision;
  // Over K: 130 skills, split 70 / 60 so the refusal can offer both halves.
  const many: Record<string, string> = {};
  for (let i = 0; i < 130; i++) {
    const half = i < 70 ? 'alpha' : 'beta';
    many[`pack/${half}/s${i}/SKILL.md`] = skillMd(`s${i}`, `Skill number ${i}`);
  }
  await seedRepository(hub.db.db, 'big', 'mono', many);
  await seedHubCollection(hub.db.db, 'acme', 'playbooks', {
    'deploy/SKILL.md': skillMd('deploy', 'Hub deploy playbook'),
    'deploy/checklist.md': '# Checklist\n\n- step\n',
    // File names keep their case though hub identities fold it (SPEC 1.3, 2.2).
    'deploy/REFERENCE.md': '# Reference\n',
    'deploy/Scripts/Run.py': 'print("run")\n',
    'deploy/run.sh': 'echo run\n',
    'rollback/SKILL.md': skillMd('rollback', 'Roll back a release'),
  });
  await seedRepository(hub.db.db, 'octo', 'kit', UNPARSED);
  await seedRepository(hub.db.db, 'acme', 'cased', {
    'Deploy/SKILL.md': skillMd('deploy', 'Cased gh files'),
    'Deploy/REFERENCE.md': '# GH reference\n',
  });
  await seedHubCollection(
    hub.db.db,
    'secret',
    'vault',
    { 'keys/SKILL.md': skillMd('keys', 'Private keys') },
    {
      visibility: 'private',
    },
  );
});

afterAll(async () => {
  await hub?.close();
});

describe('GET /v1/skills/<identity>', () => {
  it('answers a skill with frontmatter, body, files, a strong ETag and no-cache', async () => {
    const res = await get('/v1/skills/gh:acme/tools/deploy');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      kind: 'skill',
      identity: 'gh:acme/tools/deploy',
      name: 'deploy',
      description: 'Deploy the service safely',
      frontmatter: { name: 'deploy' },
      reference: '@skills:gh:acme/tools/deploy',
    });
    expect(body.body).toContain('v2');
    // The png was never downloaded, so it is not offered (file list and archive must agree).
    expect(body.files.map((f: { path: string }) => f.path).sort()).toEqual(['SKILL.md', 'scripts/run.sh']);
    expect(res.headers.etag).toBe(`"${body.revision}"`);
    expect(res.headers['cache-control']).toBe('no-cache');
  });

  it('HEAD answers the same headers without a body', async () => {
    const res = await hub.app.inject({ method: 'HEAD', url: '/v1/skills/gh:acme/tools/deploy' });
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toBe(`"${currentRevision}"`);
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.body).toBe('');
  });

  it('answers 304 without a body on a matching If-None-Match (plain, weak, in a list, *)', async () => {
    for (const inm of [
      `"${currentRevision}"`,
      `W/"${currentRevision}"`,
      `"nope", "${currentRevision}"`,
      '*',
    ]) {
      const res = await get('/v1/skills/gh:acme/tools/deploy', { 'if-none-match': inm });
      expect(res.statusCode, inm).toBe(304);
      expect(res.body).toBe('');
      expect(res.headers.etag).toBe(`"${currentRevision}"`);
      // A JSON probe carries nosniff, not the document headers a rendered page needs (see leanJsonRoute).
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['content-security-policy']).toBeUndefined();
    }
    const head = await hub.app.inject({
      method: 'HEAD',
      url: '/v1/skills/gh:acme/tools/deploy',
      headers: { 'if-none-match': `"${currentRevision}"` },
    });
    expect(head.statusCode).toBe(304);
  });

  it('answers 200 on a stale If-None-Match', async () => {
    const res = await get('/v1/skills/gh:acme/tools/deploy', { 'if-none-match': `"${oldRevision}"` });
    expect(res.statusCode).toBe(200);
    expect(res.json().revision).toBe(currentRevision);
  });

  it('pins ?rev= (old and current) as immutable; unknown revisions are 404', async () => {
    const old = await get(`/v1/skills/gh:acme/tools/deploy?rev=${oldRevision}`);
    expect(old.statusCode).toBe(200);
    expect(old.json()).toMatchObject({ revision: oldRevision, description: 'Deploy the service' });
    expect(old.json().body).toContain('v1');
    expect(old.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(old.headers.etag).toBe(`"${oldRevision}"`);
    const current = await get(`/v1/skills/gh:acme/tools/deploy?rev=${currentRevision}`);
    expect(current.statusCode).toBe(200);
    expect(current.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const unknown = await get('/v1/skills/gh:acme/tools/deploy?rev=0000000000');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers['content-type']).toContain('application/problem+json');
  });

  it('answers 410 gone with the last revision and date for a skill gone upstream', async () => {
    const res = await get('/v1/skills/gh:acme/tools/retired');
    expect(res.statusCode).toBe(410);
    expect(res.headers['content-type']).toContain('application/problem+json');
    const p = res.json();
    expect(p).toMatchObject({ code: 'gone', status: 410 });
    expect(p.lastRevision).toMatch(/^[0-9a-f]{64}$/);
    expect(p.lastSeen).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it('answers a menu for a folder, with a revision that changes with its items', async () => {
    const res = await get('/v1/skills/gh:anthropics/skills/skills');
    expect(res.statusCode).toBe(200);
    const menu = res.json();
    expect(menu.kind).toBe('menu');
    expect(menu.items.length).toBeGreaterThan(10);
    expect(menu.items.map((i: { identity: string }) => i.identity)).toContain(
      'gh:anthropics/skills/skills/skill-creator',
    );
    expect(res.headers.etag).toBe(`"${menu.revision}"`);
    const again = await get('/v1/skills/gh:anthropics/skills/skills', {
      'if-none-match': res.headers.etag as string,
    });
    expect(again.statusCode).toBe(304);
    const tools = (await get('/v1/skills/gh:acme/tools')).json();
    expect(tools.items.map((i: { identity: string }) => i.identity)).toEqual([
      'gh:acme/tools/deploy',
      'gh:acme/tools/lint',
    ]);
  });

  it('refuses a folder over K with 422 over-cap, the count and the sub-collections that fit', async () => {
    const res = await get('/v1/skills/gh:big/mono/pack');
    expect(res.statusCode).toBe(422);
    const p = res.json();
    expect(p).toMatchObject({ code: 'over-cap', count: 130 });
    expect(p.subcollections).toEqual([
      { path: 'pack/alpha', identity: 'gh:big/mono/pack/alpha', skills: 70 },
      { path: 'pack/beta', identity: 'gh:big/mono/pack/beta', skills: 60 },
    ]);
    expect((await get('/v1/skills/gh:big/mono/pack/beta')).json().items).toHaveLength(60);
  });

  it('answers 404 for unknown identities and, identically, for private ones the caller may not read', async () => {
    const missing = await get('/v1/skills/hub:secret/nothing');
    const hidden = await get('/v1/skills/hub:secret/vault');
    const hiddenSkill = await get('/v1/skills/hub:secret/vault/keys');
    for (const res of [missing, hidden, hiddenSkill]) {
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe('not-found');
      expect(Object.keys(res.json()).sort()).toEqual(Object.keys(missing.json()).sort());
    }
    expect((await get('/v1/skills/gh:nobody/nothing')).statusCode).toBe(404);
  });

  it('resolves hub: identities, percent-encoded or not, case-folded', async () => {
    const plain = await get('/v1/skills/hub:acme/playbooks/deploy');
    expect(plain.statusCode).toBe(200);
    expect(plain.json().identity).toBe('hub:acme/playbooks/deploy');
    const encoded = await get('/v1/skills/hub%3AACME%2Fplaybooks/deploy');
    expect(encoded.statusCode).toBe(200);
    expect(encoded.json().revision).toBe(plain.json().revision);
    const menu = await get('/v1/skills/hub:acme/playbooks');
    expect(menu.json().items.map((i: { identity: string }) => i.identity)).toEqual([
      'hub:acme/playbooks/deploy',
      'hub:acme/playbooks/rollback',
    ]);
  });

  it('takes a pasted @skills: reference as the identity it names', async () => {
    const plain = await get('/v1/skills/hub:acme/playbooks/deploy');
    for (const url of [
      '/v1/skills/@skills:hub:acme/playbooks/deploy',
      '/v1/skills/%40skills%3Ahub%3Aacme%2Fplaybooks%2Fdeploy',
      '/api/skills/@skills:hub:acme/playbooks/deploy',
    ]) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.headers.etag, url).toBe(plain.headers.etag);
    }
    // An unknown prefix is refused with the advice that fits the hub, which serves no bare path.
    const unknown = await get('/v1/skills/ftp:acme/x');
    expect(unknown.json()).toMatchObject({ code: 'bad-identity', reason: 'unknown-prefix' });
    expect(unknown.json().detail).toBe(
      'Unknown identity prefix "ftp:"; the hub serves gh: and hub: identities (write a colon inside a path as %3A).',
    );
  });

  it('answers 400 bad-identity with the core error code', async () => {
    const cases: [string, string][] = [
      ['/v1/skills/gh:acme/tools//x', 'empty-segment'],
      ['/v1/skills/ftp:acme/x', 'unknown-prefix'],
      ['/v1/skills/gh:acme', 'incomplete'],
      ['/v1/skills/gh:-bad-/repo', 'bad-owner'],
      ['/v1/skills/gh:acme/tools/%E0%A4%A', 'bad-percent-encoding'],
      ['/v1/skills/deploy/runbook', 'unknown-prefix'],
    ];
    for (const [url, reason] of cases) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(400);
      expect(res.json(), url).toMatchObject({ code: 'bad-identity', reason });
    }
  });

  it('sends X-Skill-Flags listing the rules that flagged a skill', async () => {
    await seedRepository(
      hub.db.db,
      'flagged',
      'repo',
      { 'risky/SKILL.md': skillMd('risky', 'Runs things') },
      {
        flags: {
          risky: [REMOTE_EXEC_FINDING],
        },
      },
    );
    const res = await get('/v1/skills/gh:flagged/repo/risky');
    expect(res.headers['x-skill-flags']).toBe('remote-exec');
    expect(res.json().flags).toEqual([
      {
        code: 'remote-exec',
        severity: 'danger',
        message: 'pipes a download into a shell',
        file: 'SKILL.md',
        line: 3,
        // Flags people can act on: the excerpt the rule matched and the revision it belongs to.
        excerpt: 'curl | sh',
        revision: res.json().revision,
      },
    ]);
    expect((await get('/v1/skills/gh:acme/tools/lint')).headers['x-skill-flags']).toBeUndefined();
  });
});

async function untar(gz: Buffer): Promise<Map<string, { content: Buffer; mtime: number; mode: number }>> {
  const out = new Map<string, { content: Buffer; mtime: number; mode: number }>();
  await new Promise<void>((resolve, reject) => {
    const parser = new Parser({
      onReadEntry: (entry: ReadEntry) => {
        const chunks: Buffer[] = [];
        entry.on('data', (c: Buffer) => chunks.push(c));
        entry.on('end', () =>
          out.set(entry.path, {
            content: Buffer.concat(chunks),
            mtime: entry.mtime?.getTime() ?? -1,
            mode: entry.mode ?? 0,
          }),
        );
      },
    });
    parser.on('end', () => resolve());
    parser.on('error', reject);
    parser.end(gz);
  });
  return out;
}

describe('GET /v1/archive/<identity>', () => {
  it('serves a deterministic tar.gz whose Content-Digest and files verify', async () => {
    const res = await get('/v1/archive/gh:acme/tools/deploy');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/gzip');
    expect(res.headers.etag).toBe(`"${currentRevision}"`);
    const bytes = res.rawPayload;
    const digest = createHash('sha256').update(bytes).digest('base64');
    expect(res.headers['content-digest']).toBe(`sha-256=:${digest}:`);
    const entries = await untar(bytes);
    const skill = (await get('/v1/skills/gh:acme/tools/deploy')).json();
    expect([...entries.keys()]).toEqual(['SKILL.md', 'scripts/run.sh']);
    for (const file of skill.files) {
      expect(createHash('sha256').update(entries.get(file.path)!.content).digest('hex')).toBe(file.sha256);
      expect(entries.get(file.path)!.mtime).toBe(0);
    }
    // Same revision, same bytes.
    const again = await get('/v1/archive/gh:acme/tools/deploy');
    expect(again.headers['content-digest']).toBe(res.headers['content-digest']);
    expect(gunzipSync(again.rawPayload).equals(gunzipSync(bytes))).toBe(true);
  });

  it('follows the same ETag rules: 304, ?rev= pinned, 410, 422, 404', async () => {
    expect(
      (await get('/v1/archive/gh:acme/tools/deploy', { 'if-none-match': `"${currentRevision}"` })).statusCode,
    ).toBe(304);
    const old = await get(`/v1/archive/gh:acme/tools/deploy?rev=${oldRevision}`);
    expect(old.statusCode).toBe(200);
    expect(old.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect((await untar(old.rawPayload)).get('scripts/run.sh')!.content.toString()).toContain('v1');
    expect((await get('/v1/archive/gh:acme/tools/retired')).statusCode).toBe(410);
    expect((await get('/v1/archive/gh:big/mono/pack')).statusCode).toBe(422);
    expect((await get('/v1/archive/gh:acme/tools')).json().code).toBe('not-a-skill');
    expect((await get('/v1/archive/gh:acme/nothing')).statusCode).toBe(404);
  });

  it('answers a 500 problem, not an empty archive, when the SKILL.md content is no longer stored', async () => {
    const skill = (await get('/v1/skills/gh:acme/tools/lint')).json();
    const md = skill.files.find((f: { path: string }) => f.path === 'SKILL.md');
    const [held] = await hub.db.db.select().from(blobs).where(eq(blobs.sha256, md.sha256));
    await hub.db.db.delete(blobs).where(eq(blobs.sha256, md.sha256));
    try {
      const res = await get('/v1/archive/gh:acme/tools/lint');
      expect(res.statusCode).toBe(500);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.json().code).toBe('internal');
    } finally {
      await hub.db.db.insert(blobs).values(held!);
    }
    expect((await get('/v1/archive/gh:acme/tools/lint')).statusCode).toBe(200);
  });
});

describe('GET /v1/files/<identity>?path=', () => {
  it('serves one file of a skill as untrusted text', async () => {
    const res = await get('/v1/files/gh:acme/tools/deploy?path=scripts/run.sh');
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('#!/bin/sh\necho v2\n');
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers.etag).toBe(`"${currentRevision}"`);
    const old = await get(`/v1/files/gh:acme/tools/deploy?path=scripts/run.sh&rev=${oldRevision}`);
    expect(old.body).toBe('#!/bin/sh\necho v1\n');
  });

  it('refuses traversal with 400 bad-path and unknown files with 404', async () => {
    for (const p of [
      '../lint/SKILL.md',
      '/etc/passwd',
      'scripts/../../x',
      'scripts\\run.sh',
      './SKILL.md',
      'a//b',
    ]) {
      const res = await get(`/v1/files/gh:acme/tools/deploy?path=${encodeURIComponent(p)}`);
      expect(res.statusCode, p).toBe(400);
      expect(res.json().code).toBe('bad-path');
    }
    expect((await get('/v1/files/gh:acme/tools/deploy?path=nope.txt')).statusCode).toBe(404);
    expect((await get('/v1/files/gh:acme/tools/deploy?path=logo.png')).statusCode).toBe(404);
    expect((await get('/v1/files/gh:acme/tools/deploy')).statusCode).toBe(400);
    // A file the crawl did not download is named, so a client knows the skill it saves is incomplete.
    const deploy = (await get('/v1/skills/gh:acme/tools/deploy')).json();
    expect(deploy.files.map((f: { path: string }) => f.path)).not.toContain('logo.png');
    expect(deploy.warnings).toContain('files-left-out');
    expect(deploy.filesLeftOut).toEqual([{ path: 'logo.png', reason: 'not-downloaded' }]);
    expect((await get('/v1/skills/gh:acme/tools/lint')).json()).not.toHaveProperty('filesLeftOut');
  });
});

describe('POST /v1/resolve', () => {
  it('answers every item in one round trip, in order', async () => {
    const res = await hub.app.inject({
      method: 'POST',
      url: '/v1/resolve',
      payload: {
        items: [
          { identity: 'gh:acme/tools/deploy', revision: currentRevision },
          { identity: 'gh:acme/tools/deploy', revision: oldRevision },
          { identity: 'hub:acme/playbooks' },
          { identity: 'gh:acme/tools/retired', revision: 'x' },
          { identity: 'hub:secret/vault/keys' },
          { identity: 'gh:big/mono/pack' },
          { identity: 'gh:acme/../x' },
        ],
      },
    });
    expect(res.statusCode).toBe(200);
    const items = res.json().items;
    expect(items).toHaveLength(7);
    expect(items[0]).toEqual({
      identity: 'gh:acme/tools/deploy',
      status: 'unchanged',
      revision: currentRevision,
      flags: [],
    });
    expect(items[1]).toMatchObject({
      status: 'changed',
      kind: 'skill',
      revision: currentRevision,
      name: 'deploy',
      description: 'Deploy the service safely',
      frontmatter: { name: 'deploy' },
    });
    expect(items[2]).toMatchObject({ status: 'changed', kind: 'menu' });
    expect(items[3]).toMatchObject({ status: 'gone' });
    expect(items[3].lastRevision).toBeTruthy();
    expect(items[4]).toEqual({ identity: 'hub:secret/vault/keys', status: 'not-found' });
    expect(items[5]).toMatchObject({ status: 'error', code: 'over-cap' });
    expect(items[6]).toMatchObject({ status: 'error', code: 'bad-identity:dot-segment' });
  });

  it('refuses more than 128 items and empty lists with 400', async () => {
    const items = Array.from({ length: 129 }, () => ({ identity: 'gh:acme/tools/deploy' }));
    expect(
      (await hub.app.inject({ method: 'POST', url: '/v1/resolve', payload: { items } })).statusCode,
    ).toBe(400);
    expect(
      (await hub.app.inject({ method: 'POST', url: '/v1/resolve', payload: { items: [] } })).statusCode,
    ).toBe(400);
  });
});

describe('skills whose frontmatter does not parse', () => {
  it('answer their whole SKILL.md as body and their folder as name, as the client reads them over git', async () => {
    for (const [file, text] of Object.entries(UNPARSED)) {
      const folder = file.split('/')[1]!;
      const res = await get(`/v1/skills/gh:octo/kit/skills/${folder}`);
      expect(res.statusCode, folder).toBe(200);
      const skill = res.json();
      expect([skill.name, skill.body, skill.description], folder).toEqual([folder, text, '']);
      expect(skill.bodyTokens, folder).toBeGreaterThan(0);
      expect(
        skill.warnings.some((w: string) => w.startsWith('parse-error: ')),
        folder,
      ).toBe(true);
    }
  });
});

describe('compatibility routes /api/skills', () => {
  it('serves the raw SKILL.md of hub:<namespace>/<name> with the same ETag rules', async () => {
    const res = await get('/api/skills/acme/playbooks/deploy');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(res.body).toBe(skillMd('deploy', 'Hub deploy playbook'));
    expect(
      (await get('/api/skills/acme/playbooks/deploy', { 'if-none-match': res.headers.etag as string }))
        .statusCode,
    ).toBe(304);
  });

  it('serves a bundled file, a folder as 404, and a menu as JSON (text only for Accept: text/plain)', async () => {
    const file = await get('/api/skills/acme/playbooks/deploy/checklist.md');
    expect(file.statusCode).toBe(200);
    expect(file.body).toBe('# Checklist\n\n- step\n');
    const folder = await get('/api/skills/acme/playbooks');
    expect(folder.statusCode).toBe(404);
    expect(folder.json().detail).toContain('?prefix=acme/playbooks/');
    const json = await get('/api/skills?prefix=acme/playbooks/');
    expect(json.statusCode).toBe(200);
    expect(json.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(json.json()).toEqual({
      skills: [
        {
          id: 'hub:acme/playbooks/deploy',
          path: 'acme/playbooks/deploy',
          name: 'deploy',
          description: 'Hub deploy playbook',
        },
        {
          id: 'hub:acme/playbooks/rollback',
          path: 'acme/playbooks/rollback',
          name: 'rollback',
          description: 'Roll back a release',
        },
      ],
    });
    expect((await get('/api/skills?prefix=hub:acme/playbooks/')).json()).toEqual(json.json());
    const menu = await get('/api/skills?prefix=acme/playbooks/', { accept: 'text/plain' });
    expect(menu.statusCode).toBe(200);
    expect(menu.headers['content-type']).toBe('text/plain; charset=utf-8');
    // One strong validator per representation: the text lines' differs from the JSON's.
    expect(menu.headers.etag).not.toBe(json.headers.etag);
    const textTag = String(menu.headers.etag);
    expect(
      (await get('/api/skills?prefix=acme/playbooks/', { accept: 'text/plain', 'if-none-match': textTag }))
        .statusCode,
    ).toBe(304);
    expect(
      (
        await get('/api/skills?prefix=acme/playbooks/', {
          accept: 'text/plain',
          'if-none-match': String(json.headers.etag),
        })
      ).statusCode,
    ).toBe(200);
    expect((await get('/api/skills?prefix=acme/playbooks/', { 'if-none-match': textTag })).statusCode).toBe(
      200,
    );
    expect(menu.body).toBe(
      '- hub:acme/playbooks/deploy: Hub deploy playbook\n- hub:acme/playbooks/rollback: Roll back a release\n',
    );
    expect(json.headers.etag).toBe(`"${(await get('/v1/skills/hub:acme/playbooks')).json().revision}"`);
    expect((await get('/api/skills/acme/playbooks/deploy/missing.md')).statusCode).toBe(404);
    expect((await get('/api/skills/secret/vault/keys')).statusCode).toBe(404);
  });

  it("serves a bundled file by its name as written: only the hub identity's case is folded", async () => {
    const text = async (url: string) => {
      const res = await get(url);
      expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
      return res.body;
    };
    expect(await text('/api/skills/acme/playbooks/deploy/REFERENCE.md')).toBe('# Reference\n');
    expect(await text('/api/skills/ACME/Playbooks/Deploy/Scripts/Run.py')).toBe('print("run")\n');
    expect(await text('/api/skills/hub:acme/playbooks/deploy/SKILL.md')).toBe(
      skillMd('deploy', 'Hub deploy playbook'),
    );
    expect(await text('/api/skills/hub%3Aacme%2Fplaybooks%2Fdeploy%2FREFERENCE.md')).toBe('# Reference\n');
    expect(await text('/api/skills/acme/playbooks/deploy/run.sh')).toBe('echo run\n');
    expect((await get('/api/skills/acme/playbooks/deploy/reference.md')).statusCode).toBe(404);
    expect(await text('/api/skills/gh:acme/cased/Deploy/REFERENCE.md')).toBe('# GH reference\n');
  });

  it('answers <path>/revision with the revision the ETag carries, pinned by ?rev=', async () => {
    const skill = await get('/api/skills/hub:acme/playbooks/deploy');
    const res = await get('/api/skills/acme/playbooks/deploy/revision');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.json()).toEqual({ revision: skill.headers.etag?.toString().slice(1, -1) });
    expect(res.headers.etag).toBe(skill.headers.etag);
    expect(
      (
        await get('/api/skills/acme/playbooks/deploy/revision', {
          'if-none-match': res.headers.etag as string,
        })
      ).statusCode,
    ).toBe(304);
    const pinned = await get(`/api/skills/acme/playbooks/deploy/revision?rev=${res.json().revision}`);
    expect(pinned.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect((await get('/api/skills/acme/playbooks/deploy?rev=nope')).statusCode).toBe(404);
    expect((await get('/api/skills/secret/vault/keys/revision')).statusCode).toBe(404);
    expect((await get('/api/skills/acme/nothing/here/revision')).statusCode).toBe(404);
  });
});

describe('index information', () => {
  it('GET /v1/repos/<owner>/<repo> answers the index status and the latest crawl report', async () => {
    const res = await get('/v1/repos/ACME/tools');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      owner: 'acme',
      name: 'tools',
      identity: 'gh:acme/tools',
      status: 'indexed',
    });
    expect(res.json().skills).toHaveLength(2);
    expect(res.json().report).toMatchObject({ outcome: 'indexed', skillsFound: 2, skillsRemoved: 1 });
    const unknown = await get('/v1/repos/nobody/nothing');
    expect(unknown.statusCode).toBe(200);
    expect(unknown.json()).toMatchObject({ status: 'not-indexed', skills: [] });
  });

  it('GET /v1/stats counts what the caller may see and names the last crawl', async () => {
    const res = await get('/v1/stats');
    expect(res.statusCode).toBe(200);
    const stats = res.json();
    expect(stats.skills).toBeGreaterThan(140);
    expect(stats.gone).toBe(1);
    expect(stats.collections).toBe(1); // the private collection is not counted
    expect(stats.lastCrawl).toMatchObject({ status: 'finished' });
  });
});
