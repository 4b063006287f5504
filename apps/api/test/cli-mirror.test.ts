/**
 * `atskills get` from apps/cli against the hub listening on 127.0.0.1: hub: identities, and gh:
 * identities through the hub's mirror (ATSKILLS_GH_VIA_HUB=1). The client's validating cache makes one
 * conditional request per use and gets 304 while nothing changed. A real `atskills` process talking to the
 * hub must not compile fetch's WebAssembly HTTP parser: Node waits for V8's background optimisation of it
 * before exiting, which made a warm `get` slower than the same command with the hub down.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCliCaptured, spawnCli } from '../../../test/support/cli.js';
import { repoRoot } from '../../../test/support/corpus.js';
import { createTestHub, type TestHub } from './support/app.js';
import { seedHubCollection, seedRepository, skillMd } from './support/seed.js';

let hub: TestHub;
let dir: string;
let env: NodeJS.ProcessEnv;
let requests: { method: string; url: string; status: number }[] = [];

beforeAll(async () => {
  hub = await createTestHub('cli_mirror');
  await seedHubCollection(hub.db.db, 'acme', 'playbooks', {
    'deploy/SKILL.md': skillMd('deploy', 'Hub deploy playbook', '# Deploy\n\nRun the hub deploy.\n'),
    'deploy/checklist.md': '# Checklist\n',
    'rollback/SKILL.md': skillMd('rollback', 'Roll back a release'),
  });
  await seedRepository(hub.db.db, 'acme', 'tools', {
    'lint/SKILL.md': skillMd('lint', 'Lint the code', '# Lint\n\nRun the linter.\n'),
    'lint/rules.md': '# Rules\n',
  });
  await hub.app.listen({ host: '127.0.0.1', port: 0 });
  hub.app.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    res.on('finish', () =>
      requests.push({ method: req.method ?? '', url: req.url ?? '', status: res.statusCode }),
    );
  });
  dir = await mkdtemp(path.join(tmpdir(), 'atskills-cli-mirror-'));
  env = {
    PATH: process.env.PATH,
    HOME: dir,
    XDG_CONFIG_HOME: path.join(dir, 'config'),
    ATSKILLS_CACHE: path.join(dir, 'cache'),
    ATSKILLS_HUB: `http://127.0.0.1:${(hub.app.server.address() as AddressInfo).port}`,
    // Anything that tried git would fail loudly: the mirror must be used.
    ATSKILLS_GIT_BASE: 'http://127.0.0.1:1',
  };
});

afterAll(async () => {
  await hub?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  requests = [];
});

const get = (identity: string, extraEnv: NodeJS.ProcessEnv = {}) =>
  runCliCaptured(['get', identity], { cwd: dir, env: { ...env, ...extraEnv } });

describe('atskills get against the hub', () => {
  it('fetches a hub: skill once, then revalidates with one request answered 304', async () => {
    const first = await get('hub:acme/playbooks/deploy');
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('Run the hub deploy.');
    expect(requests.map((r) => [r.url.split('?')[0], r.status])).toEqual([
      ['/v1/skills/hub:acme/playbooks/deploy', 200],
      ['/v1/archive/hub:acme/playbooks/deploy', 200],
    ]);
    requests = [];
    const second = await get('hub:acme/playbooks/deploy');
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('Run the hub deploy.');
    expect(requests).toEqual([{ method: 'GET', url: '/v1/skills/hub:acme/playbooks/deploy', status: 304 }]);
  });

  it('picks up a new revision on the next use', async () => {
    await seedHubCollection(hub.db.db, 'acme', 'playbooks', {
      'deploy/SKILL.md': skillMd('deploy', 'Hub deploy playbook', '# Deploy\n\nRun the NEW hub deploy.\n'),
      'deploy/checklist.md': '# Checklist\n',
      'rollback/SKILL.md': skillMd('rollback', 'Roll back a release'),
    });
    const res = await get('hub:acme/playbooks/deploy');
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('Run the NEW hub deploy.');
    expect(requests.map((r) => r.status)).toEqual([200, 200]);
  });

  it('serves a menu for a hub: collection', async () => {
    const res = await get('hub:acme/playbooks');
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('- hub:acme/playbooks/deploy: Hub deploy playbook');
    expect(res.stdout).toContain('- hub:acme/playbooks/rollback: Roll back a release');
  });

  it('resolves gh: through the mirror when ATSKILLS_GH_VIA_HUB=1, with 304 on the next use', async () => {
    const via = { ATSKILLS_GH_VIA_HUB: '1' };
    const first = await get('gh:acme/tools/lint', via);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('Run the linter.');
    expect(requests.map((r) => [r.url.split('?')[0], r.status])).toEqual([
      ['/v1/skills/gh:acme/tools/lint', 200],
      ['/v1/archive/gh:acme/tools/lint', 200],
    ]);
    requests = [];
    const second = await get('gh:acme/tools/lint', via);
    expect(second.code, second.stderr).toBe(0);
    expect(requests).toEqual([{ method: 'GET', url: '/v1/skills/gh:acme/tools/lint', status: 304 }]);
  });

  it('says exactly why when the hub has nothing at an identity', async () => {
    const res = await get('hub:acme/nothing');
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('does not exist on the hub');
  });
});

describe('an atskills process against the hub', () => {
  const HOOK = pathToFileURL(path.join(repoRoot, 'test', 'support', 'wasm-log.mjs')).href;
  /** Lines of the WebAssembly log that undici (the global fetch) wrote: its llhttp parser being compiled. */
  const undiciCompiles = async (log: string) =>
    (await readFile(log, 'utf8')).split('\n').filter((line) => line.includes('deps/undici'));

  it('fetches, then probes with 304, without compiling the WebAssembly parser of fetch', async () => {
    const log = path.join(dir, 'process.wasm-log');
    await writeFile(log, '');
    const processEnv = {
      ...env,
      ATSKILLS_CACHE: path.join(dir, 'process-cache'),
      ATSKILLS_WASM_LOG: log,
      NODE_OPTIONS: `--import=${HOOK}`,
    };
    const statuses: number[] = [];
    for (let run = 0; run < 2; run++) {
      requests = [];
      const result = await spawnCli(['get', '--json', 'hub:acme/playbooks/rollback'], {
        cwd: dir,
        env: processEnv,
      }).done;
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ kind: 'skill', stale: false });
      statuses.push(...requests.map((r) => r.status));
    }
    // The first run fetched (skill, archive), the second probed once: both went over HTTP to the hub.
    expect(statuses).toEqual([200, 200, 304]);
    expect(await undiciCompiles(log)).toEqual([]);
  });

  it('control: the hook sees the compile when a process calls fetch', async () => {
    const log = path.join(dir, 'control.wasm-log');
    await writeFile(log, '');
    await promisify(execFile)(
      process.execPath,
      [
        '--import',
        HOOK,
        '--input-type=module',
        '-e',
        `await (await fetch(${JSON.stringify(env.ATSKILLS_HUB)} + '/healthz')).text();`,
      ],
      { env: { PATH: process.env.PATH, ATSKILLS_WASM_LOG: log } },
    );
    expect(await undiciCompiles(log)).not.toEqual([]);
  });
});
