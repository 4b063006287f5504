// A hub stand-in for what a client asks about its saved copies' verdicts (SPEC 2.8): POST /v1/resolve and
// HEAD /v1/skills/<identity>?rev=<revision>. It can be cut (connections refused) or black-holed (accepted,
// never answered). Hand-written: it answers only these two questions, each the way the hub does.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

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
