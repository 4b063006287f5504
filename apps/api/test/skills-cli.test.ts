/**
 * The `skills` CLI's discovery (SPEC 2.5), tested with the real package (skills@1.5.18, vercel-labs/skills)
 * against the hub listening on 127.0.0.1: /.well-known/agent-skills/index.json (and the legacy
 * /.well-known/skills/index.json) list the public hub: skills with digests of the exact bytes each URL
 * serves; one collection has its own index; `skills add <hub>` lists them and installs one into an agent's
 * folder, byte for byte the hub's. HOME is a temporary folder and nothing but the hub is reachable.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { skills, skillUses } from '@atskills/db';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unusedPort } from '../../../test/support/ports.js';
import { createTestHub, type TestHub } from './support/app.js';
import { seedHubCollection, seedPrivateCollection, skillMd } from './support/seed.js';

const execFileAsync = promisify(execFile);
const CLI = path.resolve(import.meta.dirname, '../../../node_modules/skills/bin/cli.mjs');

let hub: TestHub;
let hubUrl: string;
let dir: string;

const DEPLOY_MD = skillMd('deploy', 'Deploy the service step by step', '# Deploy\n\nRun the deploy.\n');

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'atskills-skills-cli-'));
  const port = await unusedPort();
  hubUrl = `http://127.0.0.1:${port}`;
  hub = await createTestHub('skills_cli', { PUBLIC_URL: hubUrl });
  await seedHubCollection(hub.db.db, 'acme', 'playbooks', {
    'deploy/SKILL.md': DEPLOY_MD,
    'deploy/checklist.md': '# Checklist\n\n- tests green\n',
    'rollback/SKILL.md': skillMd('rollback', 'Roll back a release'),
  });
  // Another public rollback, used more: the index lists it under the name, not acme's.
  await seedHubCollection(hub.db.db, 'ops', 'kit', {
    'rollback/SKILL.md': skillMd('rollback', 'Roll back anything, the popular one'),
    'Bad_Name/SKILL.md': skillMd('Bad_Name', 'A name the skills CLI refuses'),
  });
  const [popular] = await hub.db.db.select().from(skills).where(eq(skills.identity, 'hub:ops/kit/rollback'));
  await hub.db.db
    .insert(skillUses)
    .values({ skillId: popular!.id, day: new Date().toISOString().slice(0, 10), uses: 5 });
  await seedPrivateCollection(hub.db.db, 'vault', 'secrets', {
    'rotate/SKILL.md': skillMd('rotate', 'Rotate the vault keys'),
  });
  await hub.app.listen({ host: '127.0.0.1', port });
}, 120_000);

afterAll(async () => {
  await hub?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Entry {
  name: string;
  description: string;
  type: string;
  url: string;
  digest: string;
}

async function index(
  pathname: string,
): Promise<{ status: number; body: { $schema: string; skills: Entry[] } }> {
  const res = await fetch(`${hubUrl}${pathname}`);
  return { status: res.status, body: (await res.json()) as { $schema: string; skills: Entry[] } };
}

const sha256 = (bytes: Buffer | string) => createHash('sha256').update(bytes).digest('hex');

describe('GET /.well-known/agent-skills/index.json', () => {
  it('lists the public hub: skills, names unique, each digest the sha256 of what its url serves', async () => {
    const { status, body } = await index('/.well-known/agent-skills/index.json');
    expect(status).toBe(200);
    expect(body.$schema).toBe('https://schemas.agentskills.io/discovery/0.2.0/schema.json');
    expect(body.skills.map((s) => s.name)).toEqual(['deploy', 'rollback']);
    const [deploy, rollback] = body.skills;
    expect(deploy).toMatchObject({ type: 'archive', description: 'Deploy the service step by step' });
    expect(rollback).toMatchObject({ type: 'skill-md', description: 'Roll back anything, the popular one' });
    for (const entry of body.skills) {
      const served = Buffer.from(await (await fetch(new URL(entry.url, hubUrl))).arrayBuffer());
      expect(entry.digest, entry.url).toBe(`sha256:${sha256(served)}`);
    }
    expect(JSON.stringify(body)).not.toContain('rotate');
    expect((await index('/.well-known/skills/index.json')).body).toEqual(body);
  });

  it('has one index per public collection, and none for a private or unknown one', async () => {
    const { status, body } = await index('/hub/acme/playbooks/.well-known/agent-skills/index.json');
    expect(status).toBe(200);
    expect(body.skills.map((s) => [s.name, s.description])).toEqual([
      ['deploy', 'Deploy the service step by step'],
      ['rollback', 'Roll back a release'],
    ]);
    for (const hidden of ['vault/secrets', 'acme/nope']) {
      expect((await fetch(`${hubUrl}/hub/${hidden}/.well-known/agent-skills/index.json`)).status).toBe(404);
    }
  });
});

describe('the skills CLI (skills@1.5.18) against the hub', () => {
  async function skillsCli(args: string[], cwd: string) {
    const home = path.join(dir, 'home');
    await mkdir(home, { recursive: true });
    return execFileAsync(process.execPath, [CLI, ...args], {
      cwd,
      timeout: 60_000,
      env: {
        PATH: process.env.PATH,
        HOME: home,
        XDG_CONFIG_HOME: path.join(home, '.config'),
        DISABLE_TELEMETRY: '1',
        DO_NOT_TRACK: '1',
        NO_COLOR: '1',
        CI: '1',
      },
    });
  }

  it('lists the hub skills, and a collection', async () => {
    const project = path.join(dir, 'list');
    await mkdir(project, { recursive: true });
    const { stdout } = await skillsCli(['add', hubUrl, '--list'], project);
    expect(stdout).toContain('deploy');
    expect(stdout).toContain('Roll back anything, the popular one');
    const collection = await skillsCli(['add', `${hubUrl}/hub/acme/playbooks`, '--list'], project);
    expect(collection.stdout).toContain('Roll back a release');
  });

  it('installs a hub skill into an agent folder, byte for byte', async () => {
    const project = path.join(dir, 'project');
    await mkdir(project, { recursive: true });
    const { stdout } = await skillsCli(
      ['add', hubUrl, '--skill', 'deploy', '--agent', 'claude-code', '--yes', '--copy'],
      project,
    );
    expect(stdout).toContain('deploy');
    const installed = path.join(project, '.claude', 'skills', 'deploy');
    const served = Buffer.from(
      await (await fetch(`${hubUrl}/api/skills/acme/playbooks/deploy`)).arrayBuffer(),
    );
    expect(await readFile(path.join(installed, 'SKILL.md'))).toEqual(served);
    expect(served.toString()).toBe(DEPLOY_MD);
    expect(await readFile(path.join(installed, 'checklist.md'), 'utf8')).toBe(
      '# Checklist\n\n- tests green\n',
    );
  });
});
