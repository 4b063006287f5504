// A saved copy's verdict (SPEC 2.8) against a small hub stand-in that can be cut (connections refused) or
// black-holed (accepted, never answered): a verdict heard on the saved revision is kept under that revision
// and never replaced by another revision's flags; a verdict nobody heard is unknown, said in a note, never
// "none"; saved copies are asked in one batch outside hooks too, and a hub that did not answer is not waited
// for again; a hook's install does not wait past its budget for a locked `.autotrigger`.
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { installSkill, residentBlock } from '../src/node/install.js';
import { Resolver } from '../src/node/resolver.js';
import { loadSettings } from '../src/node/settings.js';

/** The hub's verdict on each revision of every hub:acme/k/* skill; the current revision is `current`. */
let verdicts: Record<string, string[]> = {};
let current = 'rev2';
/** up: answers; refuse: closes every connection at once; blackhole: takes connections and never answers. */
let mode: 'up' | 'refuse' | 'blackhole' = 'up';
const asked: string[] = [];
let server: Server;
let hubUrl: string;
let base: string;

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'atskills-saved-verdicts-'));
  server = createServer((req, res) => {
    const url = decodeURIComponent(req.url ?? '');
    asked.push(`${req.method} ${url}`);
    if (mode === 'blackhole') return;
    if (mode === 'refuse') return req.socket.destroy();
    if (req.method === 'POST' && url === '/v1/resolve') {
      void bodyOf(req).then((text) => {
        const { items } = JSON.parse(text) as { items: { identity: string; revision?: string }[] };
        const answers = items.map(({ identity, revision }) =>
          revision === current
            ? { identity, status: 'unchanged', revision, flags: verdicts[current] ?? [] }
            : { identity, status: 'changed', revision: current, kind: 'skill', flags: [] },
        );
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items: answers }));
      });
      return;
    }
    const pinned = /^\/v1\/skills\/hub:acme\/k\/[^?]+\?rev=(.+)$/.exec(url);
    const flags = pinned ? verdicts[pinned[1] ?? ''] : undefined;
    if (req.method === 'HEAD' && flags)
      return res.writeHead(200, flags.length ? { 'x-skill-flags': flags.join(', ') } : {}).end();
    res.writeHead(404, { 'content-type': 'application/problem+json' }).end('{}');
  });
  server.on('connection', (socket) => socket.on('error', () => {}));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  hubUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  server.closeAllConnections();
  return new Promise<void>((r) => server.close(() => r()));
});

beforeEach(() => {
  verdicts = {};
  current = 'rev2';
  mode = 'up';
  asked.length = 0;
});

/** A project holding saved copies of `skills` at `revision`, and a cache entry of each at `cached` (if set). */
async function project(
  skills: string[],
  options: { revision?: string; cached?: { revision: string; flags: string[] } } = {},
) {
  const projectDir = await mkdtemp(path.join(base, 'project-'));
  const settings = loadSettings({
    ATSKILLS_CACHE: path.join(projectDir, 'cache'),
    ATSKILLS_HUB: hubUrl,
    ATSKILLS_PROBE_TIMEOUT_MS: '600',
    HOME: projectDir,
  });
  for (const identity of skills) {
    const dir = path.join(projectDir, '.atskills', identity.replace(':', '/'));
    await mkdir(dir, { recursive: true });
    const name = identity.split('/').at(-1);
    await writeFile(
      path.join(dir, 'SKILL.md'),
      `---\nname: ${name}\ndescription: Skill ${name}.\n---\nBODY\n`,
    );
    await writeFile(path.join(dir, '.source'), `${identity}\n2026-01-01 rev:${options.revision ?? 'rev1'}\n`);
    if (options.cached)
      // The machine's cache moved on (another project, or a plain `get`, resolved a later revision).
      await new Resolver(settings).cache.writeMeta({
        version: 1,
        identity,
        source: 'hub',
        kind: 'skill',
        revision: options.cached.revision,
        fetchedAt: '2026-02-01T00:00:00.000Z',
        checkedAt: '2026-02-01T00:00:00.000Z',
        contentKey: `rev-${options.cached.revision}`,
        flags: options.cached.flags,
      });
  }
  return { projectDir, settings };
}

const SKILL = 'hub:acme/k/s';

describe("a saved copy's verdict", () => {
  it('is kept under the saved revision, and a cache at another revision never lends its flags', async () => {
    const { projectDir, settings } = await project([SKILL], { cached: { revision: 'rev2', flags: [] } });
    verdicts = { rev1: ['reported-malicious'], rev2: [] };
    const heard = await new Resolver(settings).resolve(SKILL, { projectDir });
    expect(heard).toMatchObject({ origin: 'local', flags: ['reported-malicious'] });
    const meta = new Resolver(settings).cache.readMeta(SKILL);
    expect(meta).toMatchObject({ revision: 'rev2', flags: [], verdicts: { rev1: ['reported-malicious'] } });

    // The hub down, within a hook's budget; offline; a bare path: the verdict heard on rev1 stands.
    mode = 'refuse';
    const down = await new Resolver(settings).resolve(SKILL, { projectDir, deadline: Date.now() + 1500 });
    expect(down.flags).toEqual(['reported-malicious']);
    for (const asWhat of [SKILL, 'hub/acme/k/s'])
      expect((await new Resolver(settings).resolve(asWhat, { projectDir, offline: true })).flags).toEqual([
        'reported-malicious',
      ]);
  });

  it('is unknown when no verdict on the saved revision was heard: served with a note, never as "none"', async () => {
    const { projectDir, settings } = await project([SKILL], { cached: { revision: 'rev2', flags: [] } });
    mode = 'refuse';
    for (const options of [{ deadline: Date.now() + 1500 }, {}, { offline: true }]) {
      const answer = await new Resolver(settings).resolve(SKILL, { projectDir, ...options });
      expect(answer).toMatchObject({ origin: 'local', flags: [] });
      expect(answer.kind === 'skill' && answer.verdictUnchecked).toMatch(
        /^the hub's verdict on hub:acme\/k\/s at its saved revision rev1 could not be checked \(.+; none was heard before\)$/,
      );
    }
    // A cache holding the saved revision itself speaks for it.
    const same = await project([SKILL], { cached: { revision: 'rev1', flags: ['remote-exec'] } });
    const answer = await new Resolver(same.settings).resolve(SKILL, {
      projectDir: same.projectDir,
      offline: true,
    });
    expect(answer).toMatchObject({ flags: ['remote-exec'] });
    expect(answer).not.toHaveProperty('verdictUnchecked');
  });
});

describe("saved copies' verdicts outside hooks", () => {
  const skills = ['hub:acme/k/s1', 'hub:acme/k/s2', 'hub:acme/k/s3', 'hub:acme/k/s4'];

  it('are asked in one batch, and a hub that does not answer costs one wait, not one per copy', async () => {
    const { projectDir, settings } = await project(skills);
    await writeFile(path.join(projectDir, '.atskills/.autotrigger'), skills.map((s) => `@${s}\n`).join(''));
    verdicts = { rev1: ['reported-malicious'] };
    current = 'rev1';
    const judged = await residentBlock(new Resolver(settings), { projectDir, countTokens: false });
    expect(judged.entries).toEqual([]);
    expect(asked).toEqual(['POST /v1/resolve']);

    mode = 'blackhole';
    asked.length = 0;
    const resolver = new Resolver(settings);
    const started = Date.now();
    const report = await residentBlock(resolver, { projectDir, countTokens: false });
    // 600 ms for the one batch; a wait per copy took 4 x 600 ms.
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(asked).toEqual(['POST /v1/resolve']);
    expect(report.entries.map((e) => e.identity)).toEqual(skills);
    expect(report.warnings.map((w) => w.message)).toEqual(
      skills.map((s) =>
        expect.stringMatching(
          new RegExp(`^${s}: the hub's verdict on ${s} at its saved revision rev1 could not be checked`),
        ),
      ),
    );
    // Asked again by the same resolver: the answer it had stands, with no new request.
    const again = await resolver.resolve(skills[0]!, { projectDir });
    expect(again.kind === 'skill' && again.verdictUnchecked).toBeTruthy();
    expect(asked).toHaveLength(1);
  });

  it('stop after the first request the hub did not answer, and are remembered without a deadline', async () => {
    const { projectDir, settings } = await project(skills);
    mode = 'blackhole';
    const resolver = new Resolver(settings);
    const started = Date.now();
    for (const skill of skills) await resolver.resolve(skill, { projectDir });
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(asked).toEqual(['HEAD /v1/skills/hub:acme/k/s1?rev=rev1']);
    mode = 'up';
    verdicts = { rev1: [] };
    await resolver.resolve(skills[0]!, { projectDir });
    expect(asked).toHaveLength(1);
  });
});

describe('install under a deadline', () => {
  it('does not wait past the budget for a locked .autotrigger, and names who holds it', async () => {
    const { projectDir, settings } = await project([]);
    await mkdir(path.join(projectDir, '.atskills/deploy'), { recursive: true });
    await writeFile(
      path.join(projectDir, '.atskills/deploy/SKILL.md'),
      '---\nname: deploy\ndescription: Deploys.\n---\nbody\n',
    );
    // Held by a live process of this host (this one's parent): not stale, so it is waited for.
    await writeFile(
      path.join(projectDir, '.atskills/.autotrigger.lock'),
      `${process.ppid} ${hostname()} t\n`,
    );
    const started = Date.now();
    const outcome = await installSkill(new Resolver(settings), 'deploy', {
      projectDir,
      deadline: Date.now() + 300,
    });
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(outcome).toMatchObject({ changed: false, refused: 'locked' });
    expect(outcome.warning).toContain(`.autotrigger is locked by process ${process.ppid} on ${hostname()}`);
  });
});
