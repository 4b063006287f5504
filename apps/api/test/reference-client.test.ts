/**
 * SPEC 2.2 compatibility: the protocol authors' reference client (`atskills` by SylphAI) with
 * `ATSKILLS_HUB=<hub>/api/skills`, played request by request against the hub listening on 127.0.0.1. The
 * client keeps an ETag per URL and sends `If-None-Match`; it reads a skill as raw SKILL.md, takes a 404 for
 * "this is a folder, ask for the menu", reads the menu as `{"skills":[...]}` from `?prefix=<id>/` (its id
 * escaped with encodeURIComponent), records `/revision` in `.source`, and its save-again fetches the
 * recorded revision to check the copy is unedited.
 */
import type { AddressInfo } from 'node:net';
import { parseSkillMarkdown } from '@atskills/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestHub, type TestHub } from './support/app.js';
import { seedHubCollection, seedPrivateCollection, skillMd } from './support/seed.js';

let hub: TestHub;
let base: string;
const log: string[] = [];

/** The reference client's validating fetch: one ETag per URL, 304 serves what it holds. */
class ReferenceClient {
  private readonly cache = new Map<string, { etag: string | null; text: string }>();

  async fetch(url: string): Promise<{ status: number; text: string; from: 'network' | 'cache' }> {
    const held = this.cache.get(url);
    const headers: Record<string, string> = { 'user-agent': 'atskills' };
    if (held?.etag) headers['if-none-match'] = held.etag;
    const res = await fetch(url, { headers });
    log.push(`${res.status} ${url.slice(base.length)}`);
    if (res.status === 304 && held) return { status: 304, text: held.text, from: 'cache' };
    const text = await res.text();
    if (res.ok) this.cache.set(url, { etag: res.headers.get('etag'), text });
    return { status: res.status, text, from: 'network' };
  }

  /** `atskills get <id>`: the SKILL.md, or on 404 the menu. */
  async get(id: string) {
    const skill = await this.fetch(`${base}/${id}`);
    if (skill.status === 200 || skill.status === 304) return { kind: 'skill' as const, ...skill };
    expect(skill.status).toBe(404);
    const menu = await this.fetch(`${base}?prefix=${encodeURIComponent(id)}/`);
    expect(menu.status).toBe(200);
    return { kind: 'menu' as const, skills: (JSON.parse(menu.text) as MenuAnswer).skills };
  }

  /** `atskills save <id>`: the revision for `.source`, then the SKILL.md. */
  async save(id: string) {
    const revision = (JSON.parse((await this.fetch(`${base}/${id}/revision`)).text) as { revision: string })
      .revision;
    const skill = await this.fetch(`${base}/${id}`);
    return { revision, text: skill.text };
  }

  /** Save-again: upstream at the recorded revision must equal the copy byte for byte, then save afresh. */
  async saveAgain(id: string, copy: { revision: string; text: string }) {
    const atRecorded = await this.fetch(`${base}/${id}?rev=${encodeURIComponent(copy.revision)}`);
    if (atRecorded.status >= 400 || atRecorded.text !== copy.text) return { action: 'conflict' as const };
    return { action: 'updated' as const, ...(await this.save(id)) };
  }

  /** A whole-directory `.autotrigger` line (`@<id>/`): the menu, then every skill's frontmatter. */
  async wholeDirectory(id: string) {
    const menu = await this.fetch(`${base}?prefix=${encodeURIComponent(id)}/`);
    expect(menu.status).toBe(200);
    const rows: string[] = [];
    for (const s of (JSON.parse(menu.text) as MenuAnswer).skills) {
      const skill = await this.fetch(`${base}/${s.path || s.id}`);
      expect(skill.status).toBe(200);
      const { name, description } = parseSkillMarkdown(skill.text, s.path.split('/').at(-1) ?? '');
      rows.push(`- ${name}: ${description} (${s.path})`);
    }
    return rows;
  }
}

interface MenuAnswer {
  skills: { id: string; path: string; name: string; description: string }[];
}

beforeAll(async () => {
  hub = await createTestHub('reference_client');
  await seedHubCollection(hub.db.db, 'acme', 'playbooks', {
    'deploy/SKILL.md': skillMd('deploy', 'Hub deploy playbook', '# Deploy\n\nv1\n'),
    'rollback/SKILL.md': skillMd('rollback', 'Roll back a release'),
  });
  await seedPrivateCollection(hub.db.db, 'secret', 'vault', {
    'keys/SKILL.md': skillMd('keys', 'Private keys'),
  });
  await hub.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(hub.app.server.address() as AddressInfo).port}/api/skills`;
});

afterAll(async () => {
  await hub?.close();
});

describe('the reference client against the hub', () => {
  it('get: raw SKILL.md, revalidated with 304; a folder is 404, then the JSON menu', async () => {
    const client = new ReferenceClient();
    const first = await client.get('acme/playbooks/deploy');
    expect(first).toMatchObject({ kind: 'skill', status: 200 });
    expect(first.kind === 'skill' && first.text).toBe(
      skillMd('deploy', 'Hub deploy playbook', '# Deploy\n\nv1\n'),
    );
    expect(await client.get('acme/playbooks/deploy')).toMatchObject({ status: 304, from: 'cache' });
    expect(await client.get('hub:acme/playbooks/deploy')).toMatchObject({ kind: 'skill', status: 200 });
    const menu = await client.get('acme/playbooks');
    expect(menu).toEqual({
      kind: 'menu',
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
  });

  it('save writes a real revision; save-again of the unedited copy updates it, an edited one conflicts', async () => {
    const client = new ReferenceClient();
    const saved = await client.save('acme/playbooks/deploy');
    expect(saved.revision).not.toBe('unknown');
    expect(saved.revision).toMatch(/\S{8,}/);
    // Unchanged upstream: the copy verifies at its recorded revision.
    expect(await client.saveAgain('acme/playbooks/deploy', saved)).toMatchObject({
      action: 'updated',
      revision: saved.revision,
    });
    await seedHubCollection(hub.db.db, 'acme', 'playbooks', {
      'deploy/SKILL.md': skillMd('deploy', 'Hub deploy playbook', '# Deploy\n\nv2\n'),
      'rollback/SKILL.md': skillMd('rollback', 'Roll back a release'),
    });
    const again = await client.saveAgain('acme/playbooks/deploy', saved);
    expect(again.action).toBe('updated');
    expect(again.action === 'updated' && again.revision).not.toBe(saved.revision);
    expect(again.action === 'updated' && again.text).toContain('v2');
    const edited = { ...saved, text: `${saved.text}\nmy notes\n` };
    expect(await client.saveAgain('acme/playbooks/deploy', edited)).toEqual({ action: 'conflict' });
  });

  it('a whole-directory line (@acme/playbooks/) loads every skill of the menu', async () => {
    const rows = await new ReferenceClient().wholeDirectory('acme/playbooks');
    expect(rows).toEqual([
      '- deploy: Hub deploy playbook (acme/playbooks/deploy)',
      '- rollback: Roll back a release (acme/playbooks/rollback)',
    ]);
  });

  it('private identities answer exactly like missing ones on every call', async () => {
    const client = new ReferenceClient();
    const shape = (text: string, name: string) => {
      const json = JSON.parse(text.replaceAll(name, '<x>')) as Record<string, unknown>;
      delete json.requestId;
      delete json.instance;
      return json;
    };
    for (const [secret, missing, secretName, missingName] of [
      ['/secret/vault/keys', '/secret/vault/nope', 'keys', 'nope'],
      ['/secret/vault/keys/revision', '/secret/vault/nope/revision', 'keys', 'nope'],
      ['?prefix=secret%2Fvault/', '?prefix=secret%2Fvaulx/', 'vault', 'vaulx'],
    ] as const) {
      const a = await client.fetch(`${base}${secret}`);
      const b = await client.fetch(`${base}${missing}`);
      expect(a.status).toBe(404);
      expect(b.status).toBe(404);
      expect(shape(a.text, secretName)).toEqual(shape(b.text, missingName));
    }
    // The sequence above is exactly what the reference client sends: no /v1 route is involved.
    expect(log.every((line) => !line.includes('/v1/'))).toBe(true);
  });
});
