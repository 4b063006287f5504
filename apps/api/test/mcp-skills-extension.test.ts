/**
 * The MCP skills extension (io.modelcontextprotocol/skills, SEP-2640; SPEC 2.5) read with the real MCP SDK
 * client over Streamable HTTP against the hub listening on 127.0.0.1: the capability declared beside
 * `resources`; skills/list paged through the readable hub: skills; skills/get for hub: and gh: skills and
 * -32602 for anything else (a private skill without a token included); every file read with
 * resources/read, its bytes matching the entry's digest and size, which equal GET /v1/skills's file list.
 */
import { createHash } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ReadResourceResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { unusedPort } from '../../../test/support/ports.js';
import { createTestHub, type TestHub } from './support/app.js';
import { seedHubCollection, seedPrivateCollection, seedRepository, skillMd } from './support/seed.js';
import { seedTeam, type Tokens } from './teams-fixtures.js';

const Resource = z.object({ uri: z.string(), digest: z.string(), size: z.number() });
const Entry = z.object({
  uri: z.string(),
  frontmatter: z.record(z.string(), z.unknown()),
  resources: z.array(Resource),
});
const ListResult = z.object({
  resultType: z.literal('complete'),
  skills: z.array(Entry),
  nextCursor: z.string().optional(),
  ttlMs: z.number(),
  cacheScope: z.enum(['public', 'private']),
});
const GetResult = z.object({
  resultType: z.literal('complete'),
  skill: Entry,
  ttlMs: z.number(),
  cacheScope: z.string(),
});

let hub: TestHub;
let hubUrl: string;
let tokens: Tokens;

beforeAll(async () => {
  const port = await unusedPort();
  hubUrl = `http://127.0.0.1:${port}`;
  hub = await createTestHub('mcp_skills_ext', { PUBLIC_URL: hubUrl });
  await seedHubCollection(hub.db.db, 'acme', 'playbooks', {
    'deploy/SKILL.md': skillMd('deploy', 'Deploy the service step by step', '# Deploy\n\nRun the deploy.\n'),
    'deploy/checklist.md': '# Checklist\n\n- tests green\n',
    'deploy/scripts/run me.sh': '#!/bin/sh\necho deploy\n',
    // Its folder is not its name: left out of the extension (the tools still serve it).
    'misnamed/SKILL.md': skillMd('other-name', 'Folder and name differ'),
  });
  const many: Record<string, string> = {};
  for (let i = 0; i < 60; i++)
    many[`s${String(i).padStart(2, '0')}/SKILL.md`] = skillMd(`s${String(i).padStart(2, '0')}`, `Skill ${i}`);
  await seedHubCollection(hub.db.db, 'bulk', 'many', many);
  tokens = await seedTeam(hub.db.db, 'vault');
  await seedPrivateCollection(hub.db.db, 'vault', 'secrets', {
    'rotate/SKILL.md': skillMd('rotate', 'Rotate the vault keys'),
  });
  await seedRepository(hub.db.db, 'octo', 'tools', {
    'lint/SKILL.md': skillMd('lint', 'Lint the code'),
    'lint/rules.md': '# Rules\n',
  });
  await hub.app.listen({ host: '127.0.0.1', port });
}, 120_000);

afterAll(async () => {
  await hub?.close();
});

async function connect(token?: string) {
  const client = new Client({ name: 'skills-extension-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${hubUrl}/mcp`), {
      ...(token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {}),
    }),
  );
  return client;
}

async function listAll(client: Client) {
  const all: z.infer<typeof Entry>[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await client.request(
      { method: 'skills/list', params: cursor ? { cursor } : {} },
      ListResult,
    );
    all.push(...page.skills);
    cursor = page.nextCursor;
    pages++;
  } while (cursor);
  return { all, pages };
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function readBytes(client: Client, uri: string): Promise<Buffer> {
  const { contents } = await client.request(
    { method: 'resources/read', params: { uri } },
    ReadResourceResultSchema,
  );
  const content = contents[0]!;
  return 'blob' in content
    ? Buffer.from(content.blob as string, 'base64')
    : Buffer.from(content.text as string, 'utf8');
}

describe('the MCP skills extension', () => {
  it('is declared beside the resources capability', async () => {
    const client = await connect();
    try {
      const capabilities = client.getServerCapabilities() as Record<string, unknown> & {
        extensions?: Record<string, unknown>;
      };
      expect(capabilities.resources).toBeDefined();
      expect(capabilities.extensions?.['io.modelcontextprotocol/skills']).toEqual({});
      expect(capabilities.tools).toBeDefined();
    } finally {
      await client.close();
    }
  });

  it('reads a skill through the extension with digests equal to the hub file list', async () => {
    const client = await connect();
    try {
      const { all, pages } = await listAll(client);
      expect(pages).toBeGreaterThan(1);
      const uris = all.map((s) => s.uri);
      expect(uris).toContain('skill://hub/acme/playbooks/deploy/SKILL.md');
      expect(uris.filter((u) => u.startsWith('skill://hub/bulk/many/'))).toHaveLength(60);
      expect(new Set(uris).size).toBe(uris.length);
      expect(uris.some((u) => u.includes('misnamed'))).toBe(false);
      expect(uris.some((u) => u.includes('vault'))).toBe(false);
      const deploy = all.find((s) => s.uri === 'skill://hub/acme/playbooks/deploy/SKILL.md')!;
      expect(deploy.frontmatter).toEqual({ name: 'deploy', description: 'Deploy the service step by step' });

      const rest = (await (await fetch(`${hubUrl}/v1/skills/hub:acme/playbooks/deploy`)).json()) as {
        files: { path: string; size: number; sha256: string }[];
      };
      const expected = rest.files
        .map((f) => ({
          uri: `skill://hub/acme/playbooks/deploy/${f.path.split('/').map(encodeURIComponent).join('/')}`,
          digest: `sha256:${f.sha256}`,
          size: f.size,
        }))
        .sort((a, b) => a.uri.localeCompare(b.uri));
      expect([...deploy.resources].sort((a, b) => a.uri.localeCompare(b.uri))).toEqual(expected);
      expect(deploy.resources.map((r) => r.uri)).toContain(
        'skill://hub/acme/playbooks/deploy/scripts/run%20me.sh',
      );
      for (const resource of deploy.resources) {
        const bytes = await readBytes(client, resource.uri);
        expect(bytes.length, resource.uri).toBe(resource.size);
        expect(`sha256:${sha256(bytes)}`, resource.uri).toBe(resource.digest);
      }
      const got = await client.request(
        { method: 'skills/get', params: { uri: 'skill://hub/acme/playbooks/deploy/SKILL.md' } },
        GetResult,
      );
      expect(got.skill).toEqual(deploy);
      expect(got.cacheScope).toBe('public');
    } finally {
      await client.close();
    }
  });

  it('answers skills/get for a gh: skill, and -32602 for what it does not serve', async () => {
    const client = await connect();
    try {
      const lint = await client.request(
        { method: 'skills/get', params: { uri: 'skill://gh/octo/tools/lint/SKILL.md' } },
        GetResult,
      );
      expect(lint.skill.resources.map((r) => r.uri).sort()).toEqual([
        'skill://gh/octo/tools/lint/SKILL.md',
        'skill://gh/octo/tools/lint/rules.md',
      ]);
      expect((await readBytes(client, 'skill://gh/octo/tools/lint/rules.md')).toString()).toBe('# Rules\n');
      for (const uri of [
        'skill://hub/vault/secrets/rotate/SKILL.md',
        'skill://hub/acme/playbooks/misnamed/SKILL.md',
        'skill://hub/acme/playbooks/nope/SKILL.md',
        'skill://hub/acme/playbooks/deploy/checklist.md',
        'skill://hub/acme/playbooks/SKILL.md',
        'https://example.com/SKILL.md',
      ]) {
        await expect(
          client.request({ method: 'skills/get', params: { uri } }, GetResult),
          uri,
        ).rejects.toMatchObject({
          code: -32602,
        });
      }
      // Malformed params: -32602 naming what is wrong, not -32603 with the schema library's report.
      for (const [method, params, says] of [
        ['skills/get', {}, 'skills/get: params.uri:'],
        ['skills/get', { uri: 5 }, 'skills/get: params.uri:'],
        ['skills/list', { cursor: 5 }, 'skills/list: params.cursor:'],
        ['resources/read', {}, 'resources/read: params.uri:'],
        ['resources/list', { cursor: [] }, 'resources/list: params.cursor:'],
      ] as const) {
        const refusal = await client.request({ method, params }, GetResult).catch((error: unknown) => error);
        expect(refusal, method).toMatchObject({ code: -32602, message: expect.stringContaining(says) });
        expect((refusal as Error).message, method).not.toContain('invalid_type');
      }
      for (const uri of [
        'skill://hub/vault/secrets/rotate/SKILL.md',
        'skill://hub/acme/playbooks/deploy/nope.md',
      ]) {
        await expect(
          client.request({ method: 'resources/read', params: { uri } }, ReadResourceResultSchema),
          uri,
        ).rejects.toMatchObject({ code: -32602 });
      }
    } finally {
      await client.close();
    }
  });

  it('serves a private skill to a token that may read it', async () => {
    const reader = await connect(tokens.reader);
    try {
      const got = await reader.request(
        { method: 'skills/get', params: { uri: 'skill://hub/vault/secrets/rotate/SKILL.md' } },
        GetResult,
      );
      expect(got.skill.frontmatter.name).toBe('rotate');
      expect(got.cacheScope).toBe('private');
      const { all } = await listAll(reader);
      expect(all.map((s) => s.uri)).toContain('skill://hub/vault/secrets/rotate/SKILL.md');
    } finally {
      await reader.close();
    }
  });
});
