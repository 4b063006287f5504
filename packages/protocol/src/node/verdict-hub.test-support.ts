// A hub stand-in for what a client asks about its saved copies' verdicts (SPEC 2.8): POST /v1/resolve and
// HEAD /v1/skills/<identity>?rev=<revision>. It can be cut (connections refused) or black-holed (accepted,
// never answered). Hand-written: it answers only these two questions, each the way the hub does.
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Resolver } from './resolver.js';
import { type ClientSettings, loadSettings } from './settings.js';

/** A running verdict hub; its fields are read on every request, so a test changes them between steps. */
export interface VerdictHub {
  url: string;
  /** `METHOD path` of each request, in order. */
  asked: string[];
  /** The current revision of every skill. */
  current: string;
  /** The hub's verdict on each revision it knows (a revision missing here is a 404 to `?rev=`). */
  verdicts: Record<string, string[]>;
  /** up answers; refuse closes every connection at once; blackhole takes connections and never answers. */
  mode: 'up' | 'refuse' | 'blackhole';
  /** Whether a `changed` batch answer names the current revision's flags (else none). */
  changedFlags: boolean;
  close(): Promise<void>;
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Starts a verdict hub on a free local port. */
export async function startVerdictHub(initial: {
  current: string;
  verdicts?: Record<string, string[]>;
  changedFlags?: boolean;
}): Promise<VerdictHub> {
  const server = createServer((req, res) => {
    const url = decodeURIComponent(req.url ?? '');
    hub.asked.push(`${req.method} ${url}`);
    if (hub.mode === 'blackhole') return;
    if (hub.mode === 'refuse') return req.socket.destroy();
    if (req.method === 'POST' && url === '/v1/resolve') {
      void bodyOf(req).then((text) => {
        const { items } = JSON.parse(text) as { items: { identity: string; revision?: string }[] };
        const flags = hub.verdicts[hub.current] ?? [];
        const answers = items.map(({ identity, revision }) =>
          revision === hub.current
            ? { identity, status: 'unchanged', revision, flags }
            : {
                identity,
                status: 'changed',
                revision: hub.current,
                kind: 'skill',
                flags: hub.changedFlags ? flags : [],
              },
        );
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items: answers }));
      });
      return;
    }
    const pinned = /^\/v1\/skills\/[^?]+\?rev=(.+)$/.exec(url);
    const flags = pinned ? hub.verdicts[pinned[1] ?? ''] : undefined;
    if (req.method === 'HEAD' && flags)
      return res.writeHead(200, flags.length ? { 'x-skill-flags': flags.join(', ') } : {}).end();
    res.writeHead(404, { 'content-type': 'application/problem+json' }).end('{}');
  });
  server.on('connection', (socket) => socket.on('error', () => {}));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const hub: VerdictHub = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    asked: [],
    current: initial.current,
    verdicts: initial.verdicts ?? {},
    mode: 'up',
    changedFlags: initial.changedFlags ?? false,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
  return hub;
}

/**
 * A project (in a new folder under `base`) holding saved copies of `skills` stamped at `revision`, with the
 * machine's cache entry of each at `cached` when given (a cache that moved on, or an older one), set to ask
 * the hub at `hubUrl`.
 */
export async function projectWithSavedCopies(
  base: string,
  hubUrl: string,
  skills: string[],
  options: { revision: string; cached?: { revision: string; flags: string[] } },
): Promise<{ projectDir: string; settings: ClientSettings }> {
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
      `---\nname: ${name}\ndescription: Skill ${name}.\n---\nBODY of ${name}\n`,
    );
    await writeFile(path.join(dir, '.source'), `${identity}\n2026-01-01 rev:${options.revision}\n`);
    if (options.cached)
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
