// End to end, the client against the hub (so it lives outside both apps): the hooks of every host as each
// host runs them (SPEC 2.5, 2.8). `atskills init --agent <host>` writes the host's hooks file beside the
// user's own hooks, then each hook command is read back from that file and run through `sh -c` with the
// host's event JSON on stdin, against the hub listening on 127.0.0.1, a port that refuses connections, and a
// server that accepts and never answers. `atskills` on PATH is the bundled client. A hostile body (closers,
// a forged system block, a copied boundary) goes through every path: the frame holds.
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTeam, createToken, createUser, OPERATOR } from '../../apps/api/src/services/auth/accounts.js';
import { decideReport } from '../../apps/api/src/services/safety-reports.js';
import { createTestHub, type TestHub } from '../../apps/api/test/support/app.js';
import { HOSTILE_BODY } from '../../packages/protocol/src/frame.test-support.js';
import { installBundledClient, runCliCaptured, snapshotTree } from '../support/cli.js';
import { unusedPort } from '../support/ports.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';

const execFileAsync = promisify(execFile);

let hub: TestHub;
let origin: string;
let token: string;
let dir: string;
let binDir: string;
let closedHub: string;
let hangingHub: string;
let hanging: Server;
/** The hub through a proxy the budget tests cut: the hub a cache entry came from, hung or stopped. */
let relay: TcpProxy;
let relayed: string;
const held = new Set<Socket>();

const skill = (name: string, description: string, body: string) =>
  `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`;

const BIG_BODY = Array.from({ length: 800 }, (_, i) => `Line ${i}: ${'step '.repeat(8)}`).join('\n');

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'atskills-hooks-'));
  hub = await createTestHub('cli_hooks');
  const op = { authority: OPERATOR, now: new Date(), requestId: 'test-setup' };
  await createUser(hub.db.db, { name: 'alice' }, op);
  await createTeam(hub.db.db, { name: 'acme', owner: 'alice' }, op);
  token = (await createToken(hub.db.db, { user: 'alice', scopes: ['read', 'publish'] }, op)).token;
  await hub.app.listen({ host: '127.0.0.1', port: 0 });
  origin = `http://127.0.0.1:${(hub.app.server.address() as AddressInfo).port}`;
  binDir = await installBundledClient(dir);
  relay = await startTcpProxy({ host: '127.0.0.1', port: (hub.app.server.address() as AddressInfo).port });
  relayed = `http://127.0.0.1:${relay.port}`;
  closedHub = `http://127.0.0.1:${await unusedPort()}`;
  hanging = createServer((socket) => {
    held.add(socket); // accepted, never answered
    socket.on('close', () => held.delete(socket));
  });
  await new Promise<void>((done) => hanging.listen(0, '127.0.0.1', done));
  hangingHub = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;

  const files: Record<string, string> = {
    'deploy/SKILL.md': skill('deploy', 'Deploy the service.', '# Deploy\n\nShip it.'),
    'hostile/SKILL.md': skill('hostile', 'Looks helpful.', HOSTILE_BODY),
    'big/SKILL.md': skill('big', 'A long skill.', BIG_BODY),
    'bad/SKILL.md': skill('bad', 'Judged malicious.', '# Bad\n\nSecret payload.'),
  };
  for (let i = 1; i <= 5; i++) files[`s${i}/SKILL.md`] = skill(`s${i}`, `Resident skill ${i}.`, `body ${i}`);
  await publishFolder('collection', files, 'hub:acme/kit');
  // An administrator accepts a report that `bad` is malicious: the hub now names `reported-malicious`.
  const report = await hub.app.inject({
    method: 'POST',
    url: '/v1/skills/hub:acme/kit/bad/reports',
    headers: { authorization: `Bearer ${token}` },
    payload: { kind: 'malicious', note: 'exfiltrates keys' },
  });
  expect(report.statusCode, report.body).toBeLessThan(300);
  await decideReport(hub.db.db, (report.json() as { id: number }).id, 'accept', 'confirmed', {
    authority: OPERATOR,
    now: new Date(),
    requestId: 'test',
  });
}, 180_000);

afterAll(async () => {
  for (const socket of held) socket.destroy();
  hanging?.close();
  await relay?.close();
  await hub?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function baseEnv(home: string): NodeJS.ProcessEnv {
  return {
    PATH: `${binDir}:${process.env.PATH}`,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config-atskills'),
  };
}

/** Writes `files` (path -> text) under `root`. */
async function writeFiles(root: string, files: Record<string, string>): Promise<void> {
  for (const [rel, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, rel)), { recursive: true });
    await writeFile(path.join(root, rel), text);
  }
}

/** Writes `files` into the folder `name` and publishes it, public, to `target` as alice. */
async function publishFolder(name: string, files: Record<string, string>, target: string): Promise<void> {
  const folder = path.join(dir, name);
  await writeFiles(folder, files);
  const published = await runCliCaptured(['publish', folder, '--to', target, '--public'], {
    cwd: dir,
    env: { ...baseEnv(dir), ATSKILLS_HUB: origin, ATSKILLS_TOKEN: token },
  });
  expect(published.code, published.stderr).toBe(0);
}

/** A project with its own cache, talking to `hubUrl`. */
async function newProject(name: string, files: Record<string, string> = {}) {
  const root = path.join(dir, name);
  const project = path.join(root, 'project');
  await mkdir(project, { recursive: true });
  await writeFiles(project, files);
  const env = (hubUrl = origin, healthy = hubUrl === origin): NodeJS.ProcessEnv => ({
    ...baseEnv(root),
    ATSKILLS_CACHE: path.join(root, 'cache'),
    ATSKILLS_HUB: hubUrl,
    // The machine running the tests is shared and loaded: against the healthy hub (served from this very
    // test process) a first fetch may take longer than 1.5 s here, so those runs get a long budget. The
    // default budget is what the hanging and refusing hubs below are held to.
    ...(healthy ? { ATSKILLS_HOOK_BUDGET_MS: '30000' } : {}),
  });
  const cli = (argv: string[], hubUrl = origin) => runCliCaptured(argv, { cwd: project, env: env(hubUrl) });
  return { project, env, cli };
}

type Host = 'claude-code' | 'cursor' | 'codex';
type Event = 'session-start' | 'user-prompt';

const HOOK_FILES: Record<Host, string> = {
  'claude-code': '.claude/settings.json',
  cursor: '.cursor/hooks.json',
  codex: '.codex/hooks.json',
};
const EVENT_NAMES: Record<Host, Record<Event, string>> = {
  'claude-code': { 'session-start': 'SessionStart', 'user-prompt': 'UserPromptSubmit' },
  codex: { 'session-start': 'SessionStart', 'user-prompt': 'UserPromptSubmit' },
  cursor: { 'session-start': 'sessionStart', 'user-prompt': 'beforeSubmitPrompt' },
};

/** The hook command init wrote for `event`, read back from the host's file the way the host reads it. */
async function hookCommand(project: string, host: Host, event: Event): Promise<string> {
  const file = JSON.parse(await readFile(path.join(project, HOOK_FILES[host]), 'utf8'));
  const entries: unknown[] = file.hooks[EVENT_NAMES[host][event]];
  const commands = entries.flatMap((e) =>
    host === 'cursor'
      ? [(e as { command: string }).command]
      : (e as { hooks: { command: string }[] }).hooks.map((h) => h.command),
  );
  const ours = commands.filter((c) => c.startsWith('atskills hook'));
  expect(ours).toHaveLength(1);
  return ours[0] as string;
}

/** Runs one hook as the host does: sh -c <command>, the host's event JSON on stdin; returns the context. */
async function runHook(
  host: Host,
  event: Event,
  project: string,
  env: NodeJS.ProcessEnv,
  prompt?: string,
): Promise<{ context: string | undefined; raw: Record<string, unknown> | undefined; ms: number }> {
  const command = await hookCommand(project, host, event);
  const input =
    host === 'cursor'
      ? { hook_event_name: EVENT_NAMES[host][event], workspace_roots: [project], conversation_id: 'c1' }
      : { hook_event_name: EVENT_NAMES[host][event], cwd: project, session_id: 's1' };
  const started = performance.now();
  // Cursor runs hooks from elsewhere: the project comes from workspace_roots, not the working folder.
  const child = execFileAsync('sh', ['-c', command], { cwd: host === 'cursor' ? dir : project, env });
  child.child.stdin?.end(JSON.stringify(prompt === undefined ? input : { ...input, prompt }));
  const { stdout } = await child; // rejects on a non-zero exit
  const ms = performance.now() - started;
  if (stdout === '') return { context: undefined, raw: undefined, ms };
  const raw = JSON.parse(stdout) as Record<string, unknown>;
  if (host === 'cursor') {
    if (event === 'user-prompt') expect(raw.continue).toBe(true);
    return { context: raw.additional_context as string | undefined, raw, ms };
  }
  const specific = raw.hookSpecificOutput as { hookEventName: string; additionalContext: string };
  expect(specific.hookEventName).toBe(EVENT_NAMES[host][event]);
  return { context: specific.additionalContext, raw, ms };
}

/** The frame of `identity` in `text`: its boundary closes exactly once, after the whole body. */
function expectFrameHolds(text: string, identity: string, body: string): void {
  const open = new RegExp(
    `<(skill-text-[0-9a-f]{16}) kind="skill" identity="${identity.replace(/[/.]/g, '\\$&')}"[^\\n]*>\\n`,
  ).exec(text);
  expect(open, text).not.toBeNull();
  const tag = (open as RegExpExecArray)[1] as string;
  expect(text.split(`</${tag}>`)).toHaveLength(2);
  const inner = text.slice(
    (open as RegExpExecArray).index + (open as RegExpExecArray)[0].length,
    text.indexOf(`</${tag}>`),
  );
  expect(inner).toBe(`${body}\n`);
  expect(body).not.toContain(tag);
  // Nothing of the hostile body stands outside its frame.
  // Every frame of the answer taken out (each ends only at its own boundary): nothing hostile is left.
  const outside = text.replace(/<(skill-text-[0-9a-f]{16})[^\n]*>\n[\s\S]*?<\/\1>/g, '');
  expect(outside).not.toContain('<system>');
  expect(outside).not.toContain('developer mode');
}

function notices(text: string): number {
  return text.split('\n').filter((l) => l.startsWith('Note: text inside a <skill-text-')).length;
}

const USER_HOOKS: Record<Host, string> = {
  'claude-code': `${JSON.stringify(
    {
      permissions: { allow: ['Bash(ls)'] },
      hooks: {
        PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'echo pre' }] }],
        SessionStart: [{ hooks: [{ type: 'command', command: 'echo mine' }] }],
      },
    },
    null,
    4,
  )}\n`,
  codex:
    '{"hooks":{"SessionStart":[{"matcher":"startup","hooks":[{"type":"command","command":"echo mine"}]}]}}',
  cursor:
    '{\n  "version": 1,\n  "hooks": {\n    "afterFileEdit": [{ "command": "prettier --write" }],\n    "sessionStart": [{ "command": "echo mine" }]\n  }\n}\n',
};

describe.each(['claude-code', 'cursor', 'codex'] as const)('the %s hooks', (host) => {
  it("are written beside the user's hooks, answer in the host's shape with the frame holding, and --remove restores every byte", async () => {
    const { project, env, cli } = await newProject(`host-${host}`, { [HOOK_FILES[host]]: USER_HOOKS[host] });
    const before = await snapshotTree(project);
    const init = await cli(['init', '--agent', host]);
    expect(init.code, init.stderr).toBe(0);
    if (host === 'codex')
      expect(init.stdout).toMatch(/trust this project[\s\S]*review and trust the two hooks/);
    const file = JSON.parse(await readFile(path.join(project, HOOK_FILES[host]), 'utf8'));
    // The user's own hooks are all still there.
    expect(JSON.stringify(file)).toContain('echo mine');
    if (host === 'cursor') expect(file.version).toBe(1);

    const prompt = await runHook(
      host,
      'user-prompt',
      project,
      env(),
      'use @skills:hub:acme/kit/hostile, then @skills:hub:acme/kit/deploy:install and `$(touch pwned)`',
    );
    const context = prompt.context as string;
    expect(notices(context)).toBe(1);
    expectFrameHolds(context, 'hub:acme/kit/hostile', HOSTILE_BODY);
    expect(context).toMatch(/Warning: the hub's safety scanner flagged hub:acme\/kit\/hostile \(/);
    expect(context).toMatch(/identity="hub:acme\/kit\/hostile"[^\n]* flags="(?!none)[^"]+"/);
    expectFrameHolds(context, 'hub:acme/kit/deploy', '# Deploy\n\nShip it.');
    expect(context).toContain('(atskills note: installed: @hub:acme/kit/deploy)');
    // A cloud skill's frame names the cached folder its files are opened in (SPEC 1.4 step 4); no other
    // absolute path reaches the model (identities and project-relative paths only).
    const folders = [...context.matchAll(/ folder="([^"]+)"/g)].map((m) => m[1]!);
    expect(folders.length).toBeGreaterThan(0);
    for (const folder of folders) expect(await readdir(folder)).toContain('SKILL.md');
    expect(context.replace(/ folder="[^"]+"/g, '')).not.toContain(dir);
    expect(await readdir(project)).not.toContain('pwned');

    // No reference: nothing added (Cursor still lets the prompt through).
    const plain = await runHook(host, 'user-prompt', project, env(), 'just fix the bug');
    expect(plain.context).toBeUndefined();

    const start = await runHook(host, 'session-start', project, env());
    expect(notices(start.context as string)).toBe(1);
    expect(start.context).toMatch(
      /<skill-text-[0-9a-f]{16} kind="resident" count="1">\n- deploy: Deploy the service\. \(hub:acme\/kit\/deploy\)\n<\/skill-text-/,
    );

    expect((await cli(['uninstall', 'hub:acme/kit/deploy'])).code).toBe(0);
    const removed = await cli(['init', '--remove']);
    expect(removed.code, removed.stderr).toBe(0);
    expect(await snapshotTree(project)).toEqual(before);
  });
});

describe('the time budget', () => {
  it('answers session start with 5 cached lines within the budget when the hub hangs or refuses', async () => {
    const lines = [1, 2, 3, 4, 5].map((i) => `@hub:acme/kit/s${i}`).join('\n');
    const { project, env, cli } = await newProject('budget', { '.atskills/.autotrigger': `${lines}\n` });
    expect((await cli(['init', '--agent', 'claude-code'])).code).toBe(0);
    const healthy = await runHook('claude-code', 'session-start', project, env(relayed, true));
    expect(healthy.context).toContain('- s5: Resident skill 5. (hub:acme/kit/s5)');
    expect(healthy.context).not.toContain('atskills note');
    // The same hook on a project with nothing to resolve: the client's own start-up on this machine.
    const empty = await newProject('budget-empty');
    await empty.cli(['init', '--agent', 'claude-code']);
    const startUp = (await runHook('claude-code', 'session-start', empty.project, empty.env())).ms;

    for (const down of ['blackhole', 'refuse'] as const) {
      await relay.cut(down);
      try {
        const answer = await runHook('claude-code', 'session-start', project, env(relayed));
        for (let i = 1; i <= 5; i++)
          expect(answer.context).toContain(`- s${i}: Resident skill ${i}. (hub:acme/kit/s${i})`);
        expect(
          answer.context?.split('\n').filter((l) => l.startsWith('(atskills note:')).length,
        ).toBeGreaterThan(0);
        // 1.5 s of waiting at most, plus start-up; 2 s of slack for a loaded machine.
        expect(answer.ms, `${down}: ${answer.ms} ms against ${startUp} ms of start-up`).toBeLessThan(
          startUp + 3_500,
        );
      } finally {
        await relay.restore();
      }
    }
  });

  it('serves cached references stale and an uncached one as one line when the hub hangs', async () => {
    const { project, env, cli } = await newProject('budget-prompt');
    expect((await cli(['init', '--agent', 'codex'])).code).toBe(0);
    const warm = await runHook(
      'codex',
      'user-prompt',
      project,
      env(relayed, true),
      '@skills:hub:acme/kit/s1 @skills:hub:acme/kit/s2',
    );
    expect(warm.context).toContain('status="fresh"');
    await relay.cut('blackhole');
    const answer = await runHook(
      'codex',
      'user-prompt',
      project,
      env(relayed),
      '@skills:hub:acme/kit/s1:save @skills:hub:acme/kit/s2 @skills:hub:acme/kit/s3',
    ).finally(() => relay.restore());
    const context = answer.context as string;
    // :save within the budget too: the cached copy is saved (the hub is not asked again past the budget).
    expect(context).toMatch(/\(atskills note: saved: hub:acme\/kit\/s1 -> \.atskills\/hub\/acme\/kit\/s1/);
    expect(answer.ms).toBeLessThan(warm.ms + 3_500);
    expectFrameHolds(context, 'hub:acme/kit/s1', 'body 1');
    expect(context).toMatch(/identity="hub:acme\/kit\/s2"[^\n]*status="stale \(/);
    expect(context).toContain('(atskills: @skills:hub:acme/kit/s3 was not loaded [offline]');
    // One line for what :save did, one for every stale copy.
    expect(context.split('\n').filter((l) => l.startsWith('(atskills note:'))).toHaveLength(2);
    expect(context).toMatch(/\(atskills note: a source did not answer within 1\.5 s/);
  });
});

describe('the caps', () => {
  it('keeps one answer within 10,000 characters and bytes, each body keeping its head, a cut one saying how to read the rest', async () => {
    const { project, env, cli } = await newProject('caps');
    expect((await cli(['init', '--agent', 'cursor'])).code).toBe(0);
    const answer = await runHook(
      'cursor',
      'user-prompt',
      project,
      env(),
      '@skills:hub:acme/kit/big and @skills:hub:acme/kit/deploy and @skills:hub:acme/kit/s1',
    );
    const context = answer.context as string;
    expect(context.length).toBeLessThanOrEqual(10_000);
    expect(Buffer.byteLength(context)).toBeLessThanOrEqual(10_000);
    expect(context).toContain('Line 0: step');
    expect(context).not.toContain('Line 799:');
    expect(context).toMatch(
      /\(atskills: [\d,]+ of [\d,]+ characters of hub:acme\/kit\/big were left out to fit the context; read the rest with `atskills get hub:acme\/kit\/big`\.\)/,
    );
    expectFrameHolds(context, 'hub:acme/kit/deploy', '# Deploy\n\nShip it.');
    expectFrameHolds(context, 'hub:acme/kit/s1', 'body 1');
    // `get` gives the whole body.
    expect((await cli(['get', 'hub:acme/kit/big'])).stdout).toContain('Line 799:');
  });
});

describe('flags and verdicts on every path', () => {
  it('refuses a skill judged malicious with one line everywhere, and never installs it', async () => {
    const { project, env, cli } = await newProject('verdict');
    expect((await cli(['init', '--agent', 'claude-code'])).code).toBe(0);
    const hook = await runHook(
      'claude-code',
      'user-prompt',
      project,
      env(),
      'run @skills:hub:acme/kit/bad:install',
    );
    expect(hook.context).toContain(
      'Refused @skills:hub:acme/kit/bad: the hub judged this skill malicious (reported-malicious)',
    );
    expect(hook.context).not.toContain('Secret payload');
    expect(hook.context).toContain('not installed: hub:acme/kit/bad');
    expect(await readFile(path.join(project, '.atskills/.autotrigger'), 'utf8')).toBe('');
    const get = await cli(['get', 'hub:acme/kit/bad']);
    expect(get.code).toBe(1);
    expect(get.stdout).toContain('Refused @skills:hub:acme/kit/bad');
    expect(get.stdout).not.toContain('Secret payload');
    // Served from the cache (the hub away), the verdict still holds: the flags live in the cache entry.
    const offline = await cli(['get', '--offline', 'hub:acme/kit/bad']);
    expect(offline.stdout).toContain('Refused @skills:hub:acme/kit/bad');
    const install = await cli(['install', '--yes', 'hub:acme/kit/bad']);
    expect(install.code).toBe(1);
    expect(install.stderr).toContain('judged it malicious');
    expect(await readFile(path.join(project, '.atskills/.autotrigger'), 'utf8')).toBe('');
  });

  it('frames a hostile body on get, expand (stdin) and prompt, and asks before installing a flagged skill', async () => {
    const { project, cli } = await newProject('paths');
    const get = await cli(['get', 'hub:acme/kit/hostile']);
    expect(get.code, get.stderr).toBe(0);
    expect(notices(get.stdout)).toBe(1);
    expectFrameHolds(get.stdout, 'hub:acme/kit/hostile', HOSTILE_BODY);

    const expanded = await runCliCaptured(['expand'], {
      cwd: project,
      env: (await newProject('paths-expand')).env(),
      stdin: 'read @skills:hub:acme/kit/hostile and `$(touch pwned)`',
    });
    expect(expanded.code, expanded.stderr).toBe(0);
    expectFrameHolds(expanded.stdout, 'hub:acme/kit/hostile', HOSTILE_BODY);
    expect(await readdir(project)).not.toContain('pwned');

    // Not a terminal and no --yes: a flagged skill is not installed.
    const refused = await cli(['install', 'hub:acme/kit/hostile']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('atskills install --yes hub:acme/kit/hostile');
    const installed = await cli(['install', '--yes', 'hub:acme/kit/hostile']);
    expect(installed.code, installed.stderr).toBe(0);
    const prompt = await cli(['prompt']);
    expect(prompt.stdout).toMatch(
      /^- hostile: Looks helpful\. \(hub:acme\/kit\/hostile\) \[flagged: [^\]]+\]\n$/,
    );
    const framed = await cli(['prompt', '--framed']);
    expect(notices(framed.stdout)).toBe(1);
    expect(framed.stdout).toMatch(
      /<skill-text-[0-9a-f]{16} kind="resident" count="1">\n- hostile: .*\[flagged: /,
    );
  });
});

describe('suggestions in the user-prompt hook', () => {
  const NEED = 'the CI on my PR keeps failing on lint, can you pull the Actions logs and fix it';
  const CI_FIX = 'hub:acme/tools/ci-fix';
  const CI_BODY = 'Pull the Actions run logs with gh run view';
  // Against the healthy hub (served from this loaded test process) suggestions get a long deadline; the
  // default one (400 ms) is what the hanging and refusing hubs are held to.
  const slow = { ATSKILLS_SUGGEST_TIMEOUT_MS: '30000' };

  beforeAll(async () => {
    const files: Record<string, string> = {
      'ci-fix/SKILL.md': skill(
        'ci-fix',
        'Fix failing GitHub Actions checks on a pull request; read the workflow logs, find the failing step, fix it',
        `# ci-fix\n\n${CI_BODY}, find the lint or test step that failed, fix and push.`,
      ),
      'release-notes/SKILL.md': skill(
        'release-notes',
        'Write release notes and a changelog from the git commits since the last tag',
        '# release-notes\n\nGroup commits by type: features, fixes, breaking changes.',
      ),
      'pdf-extract/SKILL.md': skill(
        'pdf-extract',
        'Extract text and tables from PDF files into markdown',
        '# pdf-extract\n\nUse pdfplumber for tables and text.',
      ),
    };
    await publishFolder('tools', files, 'hub:acme/tools');
    await hub.app.suggestEngine.build();
  }, 120_000);

  /** The suggestions frame of a hook answer: its rows, and the whole appended text. */
  function suggestionRows(context: string | undefined): string[] {
    const frame = /<(skill-text-[0-9a-f]{16}) kind="suggestions"[^\n]*>\n([\s\S]*?)\n<\/\1>/.exec(
      context ?? '',
    );
    return frame ? (frame[2] as string).split('\n') : [];
  }

  describe.each(['claude-code', 'cursor', 'codex'] as const)('for %s', (host) => {
    it('appends framed suggestions (identity and description, never bodies), and --remove restores every byte', async () => {
      const { project, env, cli } = await newProject(`suggest-${host}`, {
        [HOOK_FILES[host]]: USER_HOOKS[host],
      });
      const before = await snapshotTree(project);
      const init = await cli(['init', '--agent', host, '--suggest']);
      expect(init.code, init.stderr).toBe(0);
      expect(init.stdout).toContain('Suggestions are on');
      expect(await hookCommand(project, host, 'user-prompt')).toBe(
        `atskills hook user-prompt --host ${host} --suggest`,
      );
      expect(await hookCommand(project, host, 'session-start')).not.toContain('--suggest');

      // A message with a need and no reference: the hub is asked and its suggestions come framed.
      const answer = await runHook(host, 'user-prompt', project, { ...env(), ...slow }, NEED);
      const context = answer.context as string;
      expect(notices(context)).toBe(1);
      const rows = suggestionRows(context);
      expect(rows[0]).toMatch(
        /^@skills:hub:acme\/tools\/ci-fix \(ci-fix\): Fix failing GitHub Actions checks on a pull request/,
      );
      expect(rows.length).toBeLessThanOrEqual(3);
      expect(context).not.toContain(CI_BODY);
      expect(context.slice(context.indexOf('Skills the @skills hub suggests')).length).toBeLessThanOrEqual(
        1_200,
      );

      // Nothing to suggest: the hub abstains and the hook adds nothing (Cursor still lets the prompt through).
      const thanks = await runHook(
        host,
        'user-prompt',
        project,
        { ...env(), ...slow },
        'thanks, that worked',
      );
      expect(thanks.context).toBeUndefined();

      // After the injected references: the referenced skill itself is not suggested again.
      const referenced = await runHook(
        host,
        'user-prompt',
        project,
        { ...env(), ...slow },
        `${NEED}, with @skills:hub:acme/kit/deploy and @skills:${CI_FIX}`,
      );
      const withRefs = referenced.context as string;
      expect(notices(withRefs)).toBe(1);
      expectFrameHolds(
        withRefs,
        CI_FIX,
        `# ci-fix\n\n${CI_BODY}, find the lint or test step that failed, fix and push.`,
      );
      expect(suggestionRows(withRefs).join('\n')).not.toContain(`@skills:${CI_FIX} `);
      if (suggestionRows(withRefs).length > 0)
        expect(withRefs.indexOf('kind="suggestions"')).toBeGreaterThan(
          withRefs.indexOf('identity="hub:acme/kit/deploy"'),
        );

      // ATSKILLS_SUGGEST=0 wins over what init chose.
      const off = await runHook(
        host,
        'user-prompt',
        project,
        { ...env(), ...slow, ATSKILLS_SUGGEST: '0' },
        NEED,
      );
      expect(off.context).toBeUndefined();

      // Re-running init with --no-suggest takes the flag back off; --remove restores every byte.
      expect((await cli(['init', '--agent', host, '--no-suggest'])).code).toBe(0);
      expect(await hookCommand(project, host, 'user-prompt')).toBe(
        `atskills hook user-prompt --host ${host}`,
      );
      expect(
        (await runHook(host, 'user-prompt', project, { ...env(), ...slow }, NEED)).context,
      ).toBeUndefined();
      expect((await cli(['init', '--agent', host, '--suggest'])).code).toBe(0);
      const removed = await cli(['init', '--remove']);
      expect(removed.code, removed.stderr).toBe(0);
      expect(await snapshotTree(project)).toEqual(before);
    });
  });

  it('does not suggest what the project installed or saved, and ATSKILLS_SUGGEST turns it on without init', async () => {
    const { project, env, cli } = await newProject('suggest-installed');
    expect((await cli(['init', '--agent', 'claude-code', '--no-suggest'])).code).toBe(0);
    const on = { ...env(), ...slow, ATSKILLS_SUGGEST: '1' };
    const message = 'write the release notes and a changelog from the git commits since the last tag';
    const first = await runHook('claude-code', 'user-prompt', project, on, message);
    expect(suggestionRows(first.context)[0]).toMatch(/^@skills:hub:acme\/tools\/release-notes /);
    expect((await cli(['install', 'hub:acme/tools/release-notes'])).code).toBe(0);
    const again = await runHook('claude-code', 'user-prompt', project, on, message);
    expect(suggestionRows(again.context).join('\n')).not.toContain('release-notes');
  });

  it('adds nothing, within the budget, when the hub hangs or refuses', async () => {
    const { project, env, cli } = await newProject('suggest-down');
    expect((await cli(['init', '--agent', 'claude-code', '--suggest'])).code).toBe(0);
    const empty = await newProject('suggest-down-startup');
    await empty.cli(['init', '--agent', 'claude-code']);
    const startUp = (await runHook('claude-code', 'user-prompt', empty.project, empty.env(), NEED)).ms;
    for (const down of [hangingHub, closedHub]) {
      const answer = await runHook('claude-code', 'user-prompt', project, env(down), NEED);
      expect(answer.context).toBeUndefined();
      // 400 ms of waiting for suggestions, well inside the 1.5 s budget; 2 s of slack for a loaded machine.
      expect(answer.ms, `${down}: ${answer.ms} ms against ${startUp} ms of start-up`).toBeLessThan(
        startUp + 2_400,
      );
      // With a reference too: the reference's one line comes back, no suggestions, within the budget.
      const withRef = await runHook(
        'claude-code',
        'user-prompt',
        project,
        env(down),
        `${NEED} @skills:${CI_FIX}`,
      );
      expect(withRef.context).toContain(`@skills:${CI_FIX} was not loaded`);
      expect(withRef.context).not.toContain('kind="suggestions"');
      expect(withRef.ms).toBeLessThan(startUp + 3_500);
    }
  });
});
