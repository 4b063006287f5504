// One message's references against a small hub stand-in (SPEC 2.2, 2.5, 2.8): the verdicts on the project's
// saved copies are asked in the message's one batch, at their saved revisions, in a hook and outside one;
// a hook's `:install` does not wait past its budget for a locked `.autotrigger`, and says who holds it.
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { loadSettings, Resolver } from '@atskills/protocol/node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { expandMessage } from '../src/expand-message.js';
import { renderAnswer } from '../src/inject.js';

/** The hub's current revision of every hub:acme/k/* skill, and its verdict on it. */
const CURRENT = 'r1';
let flags: string[] = [];
let blackhole = false;
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
  base = await mkdtemp(path.join(tmpdir(), 'atskills-expand-'));
  server = createServer((req, res) => {
    const url = decodeURIComponent(req.url ?? '');
    asked.push(`${req.method} ${url}`);
    if (blackhole) return;
    if (req.method === 'POST' && url === '/v1/resolve') {
      void bodyOf(req).then((text) => {
        const { items } = JSON.parse(text) as { items: { identity: string; revision?: string }[] };
        const answers = items.map(({ identity, revision }) =>
          revision === CURRENT
            ? { identity, status: 'unchanged', revision, flags }
            : { identity, status: 'changed', revision: CURRENT, kind: 'skill', flags },
        );
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items: answers }));
      });
      return;
    }
    if (req.method === 'HEAD' && url.endsWith(`?rev=${CURRENT}`))
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
  flags = [];
  blackhole = false;
  asked.length = 0;
});

const skillMd = (name: string) => `---\nname: ${name}\ndescription: Skill ${name}.\n---\nBODY of ${name}\n`;

/** A project holding saved copies of `skills` at the hub's current revision, with cache entries at `r0`. */
async function project(skills: string[]) {
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
    await writeFile(path.join(dir, 'SKILL.md'), skillMd(identity.split('/').at(-1) ?? ''));
    await writeFile(path.join(dir, '.source'), `${identity}\n2026-01-01 rev:${CURRENT}\n`);
    // The machine's cache holds an older revision than the one the project saved.
    await new Resolver(settings).cache.writeMeta({
      version: 1,
      identity,
      source: 'hub',
      kind: 'skill',
      revision: 'r0',
      fetchedAt: '2026-01-01T00:00:00.000Z',
      checkedAt: '2026-01-01T00:00:00.000Z',
      contentKey: 'rev-r0',
      flags: [],
    });
  }
  return { projectDir, settings };
}

describe('a message naming saved copies', () => {
  it("asks their verdicts at the saved revisions in the hook's one batch, and nothing else", async () => {
    const { projectDir, settings } = await project(['hub:acme/k/s']);
    flags = ['reported-malicious'];
    const expansion = await expandMessage(new Resolver(settings), 'use @skills:hub:acme/k/s', {
      projectDir,
      deadline: Date.now() + 1500,
    });
    expect(renderAnswer(expansion.parts, expansion.notes, projectDir)).toContain(
      'Refused @skills:hub:acme/k/s: the hub judged this skill malicious',
    );
    expect(asked).toEqual(['POST /v1/resolve']);
  });

  it('asks them in one batch outside a hook too; a hub that does not answer costs one wait and a note', async () => {
    const skills = ['hub:acme/k/s1', 'hub:acme/k/s2', 'hub:acme/k/s3'];
    const message = skills.map((s) => `@skills:${s}`).join(' ');
    const { projectDir, settings } = await project(skills);
    flags = ['remote-exec'];
    const expansion = await expandMessage(new Resolver(settings), message, { projectDir });
    expect(expansion.parts.map((p) => p.kind === 'resolved' && p.resolved.flags)).toEqual(
      skills.map(() => ['remote-exec']),
    );
    expect(asked).toEqual(['POST /v1/resolve']);

    // Another machine, which never heard a verdict on them, and a hub that takes connections and never answers.
    const other = await project(skills);
    blackhole = true;
    asked.length = 0;
    const started = Date.now();
    const cut = await expandMessage(new Resolver(other.settings), message, { projectDir: other.projectDir });
    // 600 ms for the one batch; a request per copy, each waiting its own 600 ms, took longer and made three.
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(asked).toEqual(['POST /v1/resolve']);
    const text = renderAnswer(cut.parts, cut.notes, other.projectDir);
    for (const skill of skills)
      expect(text).toContain(
        `Warning: the hub's verdict on ${skill} at its saved revision ${CURRENT} could not be checked`,
      );
  });
});

describe(':install in a hook', () => {
  it('does not wait past the budget for a locked .autotrigger: the skill loads, a note names the holder', async () => {
    const { projectDir, settings } = await project([]);
    await mkdir(path.join(projectDir, '.atskills/deploy'), { recursive: true });
    await writeFile(path.join(projectDir, '.atskills/deploy/SKILL.md'), skillMd('deploy'));
    const lock = path.join(projectDir, '.atskills/.autotrigger.lock');
    // Held by a live process of this host (this one's parent): not stale, so it is waited for.
    await writeFile(lock, `${process.ppid} ${hostname()} t\n`);
    const started = Date.now();
    const expansion = await expandMessage(new Resolver(settings), 'use @skills:deploy:install', {
      projectDir,
      deadline: Date.now() + 400,
      requireCheck: true,
    });
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(expansion.notes).toEqual([
      `not installed: deploy: .autotrigger is locked by process ${process.ppid} on ${hostname()} (${lock}); run \`atskills install deploy\` later`,
    ]);
    expect(renderAnswer(expansion.parts, expansion.notes, projectDir)).toContain('BODY of deploy');
    await expect(readFile(path.join(projectDir, '.atskills/.autotrigger'), 'utf8')).rejects.toThrow();
  });
});
