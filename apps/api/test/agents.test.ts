/**
 * Agents as clients (SPEC 2.5), against the hub listening on 127.0.0.1: /llms.txt; /SKILLS.md followed
 * literally (its shell blocks run with bash and curl in a temporary project) giving what the atskills
 * client gives; the MCP server driven by the SDK's own client, with and without a token; and the client
 * installed with `npm install -g <hub>/cli/atskills.tgz` into a temporary prefix, with no registry reachable,
 * then run against the hub it came from.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleClient, parseJsonOutput, runCliCaptured } from '../../../test/support/cli.js';
import { unusedPort } from '../../../test/support/ports.js';
import { startTcpProxy, type TcpProxy } from '../../../test/support/tcp-proxy.js';
import { loadOpsConfig } from '../src/runtime/ops-config.js';
import { createTestHub, type TestHub } from './support/app.js';
import { seedHubCollection, skillMd } from './support/seed.js';
import { seedTeam, type Tokens } from './teams-fixtures.js';

const execFileAsync = promisify(execFile);

let hub: TestHub;
let hubUrl: string;
/** The hub's address is a proxy's, so the hub can go away at that very address (the cache is keyed by it). */
let relay: TcpProxy;
let dir: string;
let tokens: Tokens;
/** The `atskills` installed from the hub by the npm test (the Claude Code test runs it as a host would). */
let installedBin = '';

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'atskills-agents-'));
  const pack = path.join(dir, 'pack');
  await bundleClient(pack);
  const port = await unusedPort();
  relay = await startTcpProxy({ host: '127.0.0.1', port });
  hubUrl = `http://127.0.0.1:${relay.port}`;
  hub = await createTestHub('agents', { PUBLIC_URL: hubUrl }, { clientPackageDir: pack });
  await seedHubCollection(hub.db.db, 'acme', 'playbooks', {
    'deploy/SKILL.md': skillMd('deploy', 'Deploy the service step by step', '# Deploy\n\nRun the deploy.\n'),
    'deploy/checklist.md': '# Checklist\n\n- tests green\n',
    'rollback/SKILL.md': skillMd('rollback', 'Roll back a release'),
  });
  tokens = await seedTeam(hub.db.db, 'vault');
  await seedHubCollection(
    hub.db.db,
    'vault',
    'secrets',
    { 'rotate/SKILL.md': skillMd('rotate', 'Rotate the vault keys', '# Rotate\n\nTurn the keys.\n') },
    { visibility: 'private' },
  );
  // A folder of 130 skills: over K = 128.
  const big: Record<string, string> = {};
  for (let i = 0; i < 130; i++) {
    const group = i < 70 ? 'alpha' : 'beta';
    big[`${group}/s${i}/SKILL.md`] = skillMd(`s${i}`, `Skill number ${i}`);
  }
  await seedHubCollection(hub.db.db, 'acme', 'big', big);
  await hub.app.listen({ host: '127.0.0.1', port });
}, 120_000);

afterAll(async () => {
  await relay?.close();
  await hub?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function text(url: string) {
  const response = await fetch(url);
  return {
    status: response.status,
    type: response.headers.get('content-type') ?? '',
    body: await response.text(),
  };
}

/** Every file under `root` (relative path -> content), for comparing two projects. */
async function tree(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (rel: string) => {
    for (const entry of await readdir(path.join(root, rel), { withFileTypes: true })) {
      const child = path.join(rel, entry.name);
      if (entry.isDirectory()) await walk(child);
      else out[child] = await readFile(path.join(root, child), 'utf8');
    }
  };
  await walk('');
  return out;
}

describe('GET /llms.txt', () => {
  it('points agents at SKILLS.md, the OpenAPI document, search and the MCP server', async () => {
    const { status, type, body } = await text(`${hubUrl}/llms.txt`);
    expect(status).toBe(200);
    expect(type).toContain('text/plain');
    for (const link of ['/SKILLS.md', '/openapi.json', '/search', '/mcp', '/cli/atskills.tgz'])
      expect(body).toContain(`${hubUrl}${link}`);
  });
});

describe('GET /SKILLS.md followed literally by a shell agent', () => {
  let blocks: Record<string, string>;

  /** Runs one block of SKILLS.md with bash in `project`, as an agent would paste it. */
  async function step(name: string, project: string, vars: Record<string, string>) {
    const script = blocks[name];
    if (!script) throw new Error(`SKILLS.md has no "# ${name}" block`);
    try {
      const { stdout, stderr } = await execFileAsync('bash', ['-c', script], {
        cwd: project,
        env: { PATH: process.env.PATH, HOME: path.join(dir, 'agent-home'), ...vars },
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  }

  function clientEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    return {
      PATH: process.env.PATH,
      HOME: path.join(dir, 'client-home'),
      XDG_CONFIG_HOME: path.join(dir, 'client-config'),
      ATSKILLS_CACHE: path.join(dir, 'client-cache'),
      ATSKILLS_HUB: hubUrl,
      ...extra,
    };
  }

  beforeAll(async () => {
    const { status, type, body } = await text(`${hubUrl}/SKILLS.md`);
    expect(status).toBe(200);
    expect(type).toContain('text/markdown');
    expect(body).toContain(`${hubUrl}/v1/skills/`);
    expect(body).not.toContain('{{HUB}}');
    blocks = Object.fromEntries(
      [...body.matchAll(/```sh\n# (\w+)\n([\s\S]*?)```/g)].map((m) => [m[1]!, `# ${m[1]}\n${m[2]}`]),
    );
    expect(Object.keys(blocks)).toEqual(['resolve', 'save', 'install', 'search']);
    await mkdir(path.join(dir, 'agent-home'), { recursive: true });
  });

  it('resolves, saves, installs and searches exactly as the atskills client does', async () => {
    const shellProject = path.join(dir, 'shell-project');
    const clientProject = path.join(dir, 'client-project');
    await mkdir(shellProject);
    await mkdir(clientProject);
    const ID = 'hub:acme/playbooks/deploy';

    // Resolve: the skill's JSON, whose body is what the client injects.
    const first = await step('resolve', shellProject, { ID });
    expect(first.code, first.stderr).toBe(0);
    const skill = JSON.parse(first.stdout);
    const client = parseJsonOutput<{ body: string; name: string; revision: string }>(
      await runCliCaptured(['get', '--json', ID], { cwd: clientProject, env: clientEnv() }),
    );
    expect(skill).toMatchObject({
      kind: 'skill',
      name: client.name,
      revision: client.revision,
      body: client.body,
    });
    expect(skill.files.map((f: { path: string }) => f.path).sort()).toEqual(['SKILL.md', 'checklist.md']);
    // Again: the validating cache revalidates (304) and answers the same.
    const second = await step('resolve', shellProject, { ID });
    expect(JSON.parse(second.stdout)).toEqual(skill);

    // Save: the same files and the same two-line .source as `atskills save`.
    const saved = await step('save', shellProject, { ID });
    expect(saved.code, saved.stderr).toBe(0);
    const clientSave = await runCliCaptured(['save', ID], { cwd: clientProject, env: clientEnv() });
    expect(clientSave.code, clientSave.stderr).toBe(0);
    const shellTree = await tree(path.join(shellProject, '.atskills'));
    expect(shellTree).toEqual(await tree(path.join(clientProject, '.atskills')));
    expect(shellTree[path.join('hub', 'acme', 'playbooks', 'deploy', '.source')]).toMatch(
      new RegExp(`^${ID}\\n\\d{4}-\\d\\d-\\d\\d rev:${client.revision}\\n$`),
    );
    // The saved copy now answers first, with no network.
    expect((await step('resolve', shellProject, { ID })).stdout).toMatch(
      /^local \.atskills\/hub\/acme\/playbooks\/deploy\n---/,
    );
    // Saving over a saved copy is a conflict the user decides.
    expect((await step('save', shellProject, { ID })).code).toBe(6);

    // Install: the same .autotrigger line, once; a project skill that does not exist is refused by both.
    for (const id of [ID, 'hub:acme/playbooks/rollback']) {
      expect((await step('install', shellProject, { ID: id })).code).toBe(0);
      await runCliCaptured(['install', id], { cwd: clientProject, env: clientEnv() });
    }
    // A folder of skills (resolved first, as step 4 says) installs as a whole-directory line, slash kept.
    expect((await step('resolve', shellProject, { ID: 'hub:acme/big/alpha' })).code).toBe(0);
    const folder = await step('install', shellProject, { ID: 'hub:acme/big/alpha' });
    expect(folder.stdout).toContain('Installed: @hub:acme/big/alpha/');
    await runCliCaptured(['install', 'hub:acme/big/alpha'], { cwd: clientProject, env: clientEnv() });
    expect((await step('install', shellProject, { ID: 'deploy/runbook' })).code).toBe(3);
    expect(
      (await runCliCaptured(['install', 'deploy/runbook'], { cwd: clientProject, env: clientEnv() })).code,
    ).toBe(3);
    await step('install', shellProject, { ID });
    const triggers = await readFile(path.join(shellProject, '.atskills', '.autotrigger'), 'utf8');
    expect(triggers).toBe(await readFile(path.join(clientProject, '.atskills', '.autotrigger'), 'utf8'));

    // Search: the same references, in the same order, as `atskills search`.
    const found = JSON.parse((await step('search', shellProject, { Q: 'deploy service' })).stdout);
    const clientFound = parseJsonOutput<{ results: { reference: string }[] }>(
      await runCliCaptured(['search', '--json', '--limit', '10', 'deploy', 'service'], {
        cwd: clientProject,
        env: clientEnv(),
      }),
    );
    expect(found.results.map((r: { reference: string }) => r.reference)).toEqual(
      clientFound.results.map((r) => r.reference),
    );
    expect(found.results[0]).toMatchObject({ reference: '@skills:hub:acme/playbooks/deploy' });
    expect(found.results[0].descriptionTokens).toBeGreaterThan(0);
  });

  it('shows a menu for a folder, and a problem with its code for what cannot be resolved', async () => {
    const project = path.join(dir, 'shell-errors');
    await mkdir(project);
    const menu = JSON.parse((await step('resolve', project, { ID: 'hub:acme/playbooks' })).stdout);
    expect(menu.kind).toBe('menu');
    expect(menu.items.map((i: { identity: string }) => i.identity)).toEqual([
      'hub:acme/playbooks/deploy',
      'hub:acme/playbooks/rollback',
    ]);
    const missing = await step('resolve', project, { ID: 'hub:acme/playbooks/nope' });
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout)).toMatchObject({ status: 404, code: 'not-found' });
    const local = await step('resolve', project, { ID: 'deploy/runbook' });
    expect(local.code).toBe(3);
    expect(local.stdout).toContain('not-found: no project skill at .atskills/deploy/runbook');
  });

  it('sees private skills only with a token', async () => {
    const project = path.join(dir, 'shell-private');
    await mkdir(project);
    const ID = 'hub:vault/secrets/rotate';
    const anonymous = await step('resolve', project, { ID });
    expect(JSON.parse(anonymous.stdout)).toMatchObject({ status: 404, code: 'not-found' });
    const withToken = await step('resolve', project, { ID, ATSKILLS_TOKEN: tokens.reader });
    expect(withToken.code, withToken.stderr).toBe(0);
    expect(JSON.parse(withToken.stdout)).toMatchObject({ kind: 'skill', name: 'rotate' });
    const saved = await step('save', project, { ID, ATSKILLS_TOKEN: tokens.reader });
    expect(saved.code, saved.stderr).toBe(0);
    expect(
      await readFile(path.join(project, '.atskills/hub/vault/secrets/rotate/SKILL.md'), 'utf8'),
    ).toContain('Turn the keys.');
  });
});

describe('/mcp with the SDK client', () => {
  async function connect(token?: string) {
    const client = new Client({ name: 'agents-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${hubUrl}/mcp`), {
      ...(token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {}),
    });
    await client.connect(transport);
    return client;
  }

  // biome-ignore lint/suspicious/noExplicitAny: tool answers are checked field by field below
  type ToolAnswer = { isError?: boolean; content: { type: string; text: string }[]; structuredContent?: any };

  it('lists the tools, searches with paste-ready references and resolves skills, menus, files and batches', async () => {
    const client = await connect();
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([
        'read_skill_file',
        'resolve_batch',
        'resolve_skill',
        'search_skills',
        'suggest_skills',
      ]);
      const search = (await client.callTool({
        name: 'search_skills',
        arguments: { query: 'deploy' },
      })) as ToolAnswer;
      expect(search.isError).toBeFalsy();
      expect(search.structuredContent.results[0]).toMatchObject({
        reference: '@skills:hub:acme/playbooks/deploy',
        name: 'deploy',
        description: 'Deploy the service step by step',
        // The fields of a /v1/search result (SPEC 2.1).
        source: 'hub',
        repository: 'acme/playbooks',
        path: 'deploy',
        popularity: expect.any(Number),
      });
      expect(search.structuredContent.results[0].descriptionTokens).toBeGreaterThan(0);
      expect(search.content[0]!.text).toContain('@skills:hub:acme/playbooks/deploy (deploy,');

      const skill = (await client.callTool({
        name: 'resolve_skill',
        arguments: { identity: '@skills:hub:acme/playbooks/deploy' },
      })) as ToolAnswer;
      expect(skill.structuredContent).toMatchObject({
        kind: 'skill',
        name: 'deploy',
        frontmatter: { name: 'deploy', description: 'Deploy the service step by step' },
        body: '# Deploy\n\nRun the deploy.\n',
      });
      expect(skill.structuredContent.files.map((f: { path: string }) => f.path).sort()).toEqual([
        'SKILL.md',
        'checklist.md',
      ]);
      expect(skill.content[0]!.text).toContain('# Deploy\n\nRun the deploy.');

      const menu = (await client.callTool({
        name: 'resolve_skill',
        arguments: { identity: 'hub:acme/playbooks' },
      })) as ToolAnswer;
      expect(menu.structuredContent.kind).toBe('menu');
      expect(menu.content[0]!.text).toContain('- hub:acme/playbooks/rollback: Roll back a release');

      const file = (await client.callTool({
        name: 'read_skill_file',
        arguments: { identity: 'hub:acme/playbooks/deploy', path: 'checklist.md' },
      })) as ToolAnswer;
      // Framed as third-party text (SPEC 2.8), the file's text whole inside the frame.
      expect(file.content[0]!.text).toMatch(
        /^<skill-text-[0-9a-f]{16} kind="skill" [^\n]*path="checklist.md"[^\n]*>\n# Checklist\n\n- tests green\n<\/skill-text-[0-9a-f]{16}>$/,
      );

      const batch = (await client.callTool({
        name: 'resolve_batch',
        arguments: {
          items: [
            { identity: 'hub:acme/playbooks/deploy', revision: skill.structuredContent.revision },
            { identity: 'hub:acme/playbooks/rollback' },
            { identity: 'hub:acme/playbooks/nope' },
          ],
        },
      })) as ToolAnswer;
      expect(batch.structuredContent.items.map((i: { status: string }) => i.status)).toEqual([
        'unchanged',
        'changed',
        'not-found',
      ]);
    } finally {
      await client.close();
    }
  });

  it('answers with the REST problem codes', async () => {
    const client = await connect();
    try {
      const missing = (await client.callTool({
        name: 'resolve_skill',
        arguments: { identity: 'hub:acme/playbooks/nope' },
      })) as ToolAnswer;
      expect(missing.isError).toBe(true);
      expect(missing.structuredContent).toMatchObject({ status: 404, code: 'not-found' });
      const bad = (await client.callTool({
        name: 'resolve_skill',
        arguments: { identity: 'gh:o/r/../x' },
      })) as ToolAnswer;
      expect(bad.structuredContent).toMatchObject({ status: 400, code: 'bad-identity' });
      const overCap = (await client.callTool({
        name: 'resolve_skill',
        arguments: { identity: 'hub:acme/big' },
      })) as ToolAnswer;
      expect(overCap.isError).toBe(true);
      expect(overCap.structuredContent).toMatchObject({ status: 422, code: 'over-cap', count: 130 });
      const rest = (await (await fetch(`${hubUrl}/v1/skills/hub:acme/big`)).json()) as {
        subcollections: unknown;
      };
      expect(overCap.structuredContent.subcollections).toEqual(rest.subcollections);
      const notAFile = (await client.callTool({
        name: 'read_skill_file',
        arguments: { identity: 'hub:acme/playbooks', path: 'x.md' },
      })) as ToolAnswer;
      expect(notAFile.structuredContent).toMatchObject({ status: 422, code: 'not-a-skill' });
      // A cursor REST refuses with 400 bad-cursor is no internal failure here either.
      for (const cursor of [
        'garbage',
        (
          (await client.callTool({
            name: 'search_skills',
            arguments: { query: 'deploy', limit: 1 },
          })) as ToolAnswer
        ).structuredContent.nextCursor,
      ]) {
        const badCursor = (await client.callTool({
          name: 'search_skills',
          arguments: { query: 'rollback the release', cursor },
        })) as ToolAnswer;
        expect(badCursor.structuredContent, String(cursor)).toMatchObject({
          status: 400,
          code: 'bad-cursor',
        });
      }
      // A :save or :install item is refused alone; the batch's other items are answered.
      const batch = (await client.callTool({
        name: 'resolve_batch',
        arguments: {
          items: [
            { identity: 'hub:acme/playbooks/deploy' },
            { identity: 'hub:acme/playbooks/deploy:install' },
          ],
        },
      })) as ToolAnswer;
      expect(batch.isError).toBeFalsy();
      expect(batch.structuredContent.items).toMatchObject([
        { identity: 'hub:acme/playbooks/deploy', status: 'changed' },
        { identity: 'hub:acme/playbooks/deploy:install', status: 'error', code: 'bad-identity' },
      ]);
    } finally {
      await client.close();
    }
  });

  it('keeps private skills invisible without a token and shows them with one', async () => {
    const anonymous = await connect();
    const reader = await connect(tokens.reader);
    try {
      const hidden = (await anonymous.callTool({
        name: 'resolve_skill',
        arguments: { identity: 'hub:vault/secrets/rotate' },
      })) as ToolAnswer;
      expect(hidden.structuredContent).toMatchObject({ status: 404, code: 'not-found' });
      const none = (await anonymous.callTool({
        name: 'search_skills',
        arguments: { query: 'rotate vault keys' },
      })) as ToolAnswer;
      expect(none.structuredContent.results.map((r: { identity: string }) => r.identity)).not.toContain(
        'hub:vault/secrets/rotate',
      );
      const shown = (await reader.callTool({
        name: 'resolve_skill',
        arguments: { identity: 'hub:vault/secrets/rotate' },
      })) as ToolAnswer;
      expect(shown.structuredContent).toMatchObject({ kind: 'skill', body: '# Rotate\n\nTurn the keys.\n' });
      const found = (await reader.callTool({
        name: 'search_skills',
        arguments: { query: 'rotate vault keys' },
      })) as ToolAnswer;
      expect(found.structuredContent.results[0]).toMatchObject({ identity: 'hub:vault/secrets/rotate' });
    } finally {
      await anonymous.close();
      await reader.close();
    }
  });

  it('refuses a revoked token with 401, as REST does', async () => {
    const client = new Client({ name: 'agents-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(new URL(`${hubUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${tokens.revoked}` } },
    });
    await expect(client.connect(transport)).rejects.toThrow(/401/);
    const rest = await fetch(`${hubUrl}/v1/skills/hub:acme/playbooks/deploy`, {
      headers: { authorization: `Bearer ${tokens.revoked}` },
    });
    expect(rest.status).toBe(401);
  });
});

describe('npm install -g <hub>/cli/atskills.tgz', () => {
  it('installs a working client, without any registry, that talks to the hub it came from', async () => {
    const prefix = path.join(dir, 'prefix');
    const home = path.join(dir, 'npm-home');
    await mkdir(home, { recursive: true });
    const env = {
      PATH: process.env.PATH,
      HOME: home,
      npm_config_cache: path.join(home, '.npm'),
      // Nothing listens there: any registry request would fail the install.
      npm_config_registry: 'http://127.0.0.1:9/',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false',
    };
    await execFileAsync('npm', ['install', '-g', '--prefix', prefix, `${hubUrl}/cli/atskills.tgz`], {
      env,
      timeout: 120_000,
    });
    const bin = path.join(prefix, 'bin', 'atskills');
    installedBin = bin;
    const installed = JSON.parse(
      await readFile(path.join(prefix, 'lib', 'node_modules', 'atskills', 'package.json'), 'utf8'),
    );
    expect(installed.dependencies ?? {}).toEqual({});
    expect(
      JSON.parse(await readFile(path.join(prefix, 'lib', 'node_modules', 'atskills', 'hub.json'), 'utf8')),
    ).toEqual({ hub: hubUrl });
    const project = path.join(dir, 'installed-project');
    await mkdir(project);
    // No ATSKILLS_HUB: the default is the hub it was downloaded from.
    const run = (args: string[], extra: Record<string, string> = {}) =>
      execFileAsync(bin, args, {
        cwd: project,
        env: { PATH: process.env.PATH, HOME: home, ATSKILLS_CACHE: path.join(home, 'cache'), ...extra },
      });
    expect((await run(['--version'])).stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const got = await run(['get', 'hub:acme/playbooks/deploy']);
    expect(got.stdout).toMatch(/kind="skill" identity="hub:acme\/playbooks\/deploy" name="deploy"/);
    expect(got.stdout).toContain('Run the deploy.');
    expect((await run(['search', 'deploy'])).stdout).toContain('@skills:hub:acme/playbooks/deploy');
    await run(['save', 'hub:acme/playbooks/deploy']);
    await run(['install', 'hub:acme/playbooks/deploy']);
    expect(await readFile(path.join(project, '.atskills', '.autotrigger'), 'utf8')).toBe(
      '@hub:acme/playbooks/deploy\n',
    );
    const secret = await run(['get', 'hub:vault/secrets/rotate'], { ATSKILLS_TOKEN: tokens.reader });
    expect(secret.stdout).toContain('Turn the keys.');
  }, 180_000);

  it('answers 304 for the tarball it already sent', async () => {
    const first = await fetch(`${hubUrl}/cli/atskills.tgz`);
    expect(first.headers.get('content-type')).toBe('application/gzip');
    const etag = first.headers.get('etag')!;
    await first.arrayBuffer();
    const again = await fetch(`${hubUrl}/cli/atskills.tgz`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
  });
});

describe('a Claude Code project wired by the installed client', () => {
  it('injects references at the point of use, and a stale copy with a note when the hub is down', async () => {
    expect(installedBin, 'the npm install test runs first').not.toBe('');
    const project = path.join(dir, 'claude-project');
    await mkdir(project);
    const home = path.join(dir, 'claude-home');
    const env = (extra: Record<string, string> = {}) => ({
      PATH: `${path.dirname(installedBin)}:${process.env.PATH}`,
      HOME: home,
      ATSKILLS_CACHE: path.join(home, 'cache'),
      // A first fetch on a loaded CI machine can outlast the 1.5 s budget; the budget itself is held to
      // account in test/agents/hooks.test.ts (hanging and refusing hubs).
      ATSKILLS_HOOK_BUDGET_MS: '30000',
      ...extra,
    });
    // No ATSKILLS_HUB anywhere: the hub is the one the client came from.
    const init = await execFileAsync(installedBin, ['init', '--agent', 'claude-code'], {
      cwd: project,
      env: env(),
    });
    expect(init.stdout).toContain('created .atskills/SKILLS.md');
    expect(await readFile(path.join(project, '.atskills', 'SKILLS.md'), 'utf8')).toBe(
      (await text(`${hubUrl}/SKILLS.md`)).body,
    );
    expect(await readFile(path.join(project, 'CLAUDE.md'), 'utf8')).toContain(
      `follow .atskills/SKILLS.md (from ${hubUrl}/SKILLS.md)`,
    );
    const settings = JSON.parse(await readFile(path.join(project, '.claude', 'settings.json'), 'utf8'));
    const hook = async (
      event: 'SessionStart' | 'UserPromptSubmit',
      input: object,
      extra?: Record<string, string>,
    ) => {
      const command: string = settings.hooks[event][0].hooks[0].command;
      const child = execFileAsync('sh', ['-c', command], { cwd: project, env: env(extra) });
      child.child.stdin?.end(JSON.stringify({ hook_event_name: event, cwd: project, ...input }));
      const { stdout } = await child;
      return stdout === ''
        ? undefined
        : (JSON.parse(stdout).hookSpecificOutput as { additionalContext: string });
    };
    const fresh = await hook('UserPromptSubmit', {
      prompt: 'ship it with @skills:hub:acme/playbooks/deploy:install',
    });
    expect(fresh?.additionalContext).toContain('name="deploy"');
    expect(fresh?.additionalContext).toContain('status="fresh"');
    expect(fresh?.additionalContext).toContain('Run the deploy.');
    expect(fresh?.additionalContext).toContain('installed: @hub:acme/playbooks/deploy');
    const start = await hook('SessionStart', { source: 'startup' });
    expect(start?.additionalContext).toContain(
      '- deploy: Deploy the service step by step (hub:acme/playbooks/deploy)',
    );

    // The hub goes away: the cached copy is injected, marked stale, with one note line; the hook is quick.
    await relay.cut('refuse');
    const started = performance.now();
    const stale = await hook('UserPromptSubmit', { prompt: 'again @skills:hub:acme/playbooks/deploy' });
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(stale?.additionalContext).toContain('status="stale (');
    expect(stale?.additionalContext).toContain('Run the deploy.');
    expect(stale?.additionalContext.split('\n').filter((l) => l.startsWith('(atskills note:'))).toHaveLength(
      1,
    );
    const staleStart = await hook('SessionStart', { source: 'resume' });
    expect(staleStart?.additionalContext).toContain('- deploy: Deploy the service step by step');
    expect(staleStart?.additionalContext).toMatch(/\(atskills note: warning: line 1 .*cannot be reached/);
    await relay.restore();
  }, 60_000);
});

describe('/mcp rate limit', () => {
  it('counts MCP calls and REST requests of one caller against the same limit', async () => {
    const limited = await createTestHub(
      'agents_rate',
      {},
      { ops: { config: loadOpsConfig({ RATE_LIMIT_MAX: '3' }) } },
    );
    try {
      await limited.app.listen({ host: '127.0.0.1', port: 0 });
      const base = `http://127.0.0.1:${(limited.app.server.address() as { port: number }).port}`;
      const mcp = (id: number) =>
        fetch(`${base}/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params: {} }),
        });
      expect((await fetch(`${base}/search?q=deploy`)).status).toBe(200);
      const first = await mcp(1);
      expect(first.status).toBe(200);
      expect(((await first.json()) as { result: { tools: unknown[] } }).result.tools).toHaveLength(5);
      expect((await mcp(2)).status).toBe(200);
      const refused = await mcp(3);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('retry-after')).not.toBeNull();
      expect(await refused.json()).toMatchObject({ code: 'rate-limited' });
      expect((await fetch(`${base}/search?q=deploy`)).status).toBe(429);
    } finally {
      await limited.close();
    }
  });
});
