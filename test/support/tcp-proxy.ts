/**
 * A TCP proxy on 127.0.0.1 in front of a shared service (Postgres, Redis) that a test can cut and
 * restore, so "the database is down" happens to one test's connections only: the machine's servers keep
 * running for every other test file. Hand-written on node:net because it is ~100 lines and the fault
 * modes we need (refuse, reset, black hole) are exactly what generic proxies hide.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * How a cut behaves:
 * - `refuse`: every open connection is reset and the port stops listening (ECONNREFUSED), like a stopped server;
 * - `reset`: the port still accepts, but each new connection is destroyed at once (a crashing server);
 * - `blackhole`: open connections are kept but nothing passes either way, and new ones are accepted and
 *   never answered (a hung server or a dropped network path).
 */
export type CutMode = 'refuse' | 'reset' | 'blackhole';

export interface TcpProxy {
  /** The port clients connect to instead of the upstream's. */
  readonly port: number;
  /** `url` with its host and port replaced by the proxy's (keeps user, database, query). */
  rewrite(url: string): string;
  /** Takes the upstream away (see CutMode). Idempotent. */
  cut(mode?: CutMode): Promise<void>;
  /** Brings the upstream back: new connections pass again. Connections broken by the cut stay broken. */
  restore(): Promise<void>;
  /** Connections accepted since the start (a test can check that clients reconnected). */
  readonly accepted: number;
  /** Connections currently open through the proxy. */
  readonly open: number;
  close(): Promise<void>;
}

/** Starts a proxy on 127.0.0.1 (a free port) forwarding to `upstream`. */
export async function startTcpProxy(upstream: { host: string; port: number }): Promise<TcpProxy> {
  const pairs = new Set<{ client: Socket; server: Socket }>();
  let mode: CutMode | null = null;
  let accepted = 0;
  let server: Server = createServer();
  let port = 0;

  const onConnection = (client: Socket) => {
    accepted++;
    client.on('error', () => {});
    if (mode === 'reset' || mode === 'refuse') {
      client.resetAndDestroy();
      return;
    }
    if (mode === 'blackhole') {
      // Accepted and never answered; kept so close() can end it.
      const pair = { client, server: client };
      pairs.add(pair);
      client.on('close', () => pairs.delete(pair));
      return;
    }
    const upstreamSocket = connect({ host: upstream.host, port: upstream.port });
    upstreamSocket.on('error', () => client.destroy());
    client.on('error', () => upstreamSocket.destroy());
    const pair = { client, server: upstreamSocket };
    pairs.add(pair);
    const forget = () => {
      pairs.delete(pair);
      client.destroy();
      upstreamSocket.destroy();
    };
    client.on('close', forget);
    upstreamSocket.on('close', forget);
    client.pipe(upstreamSocket);
    upstreamSocket.pipe(client);
  };

  const listen = (onPort: number) =>
    new Promise<void>((resolve, reject) => {
      server = createServer(onConnection);
      server.once('error', reject);
      server.listen({ host: '127.0.0.1', port: onPort }, () => {
        server.off('error', reject);
        port = (server.address() as { port: number }).port;
        resolve();
      });
    });
  const stopListening = () => new Promise<void>((resolve) => server.close(() => resolve()));

  await listen(0);

  return {
    get port() {
      return port;
    },
    get accepted() {
      return accepted;
    },
    get open() {
      return pairs.size;
    },
    rewrite(url: string) {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    },
    async cut(next: CutMode = 'refuse') {
      if (mode === next) return;
      mode = next;
      if (next === 'blackhole') {
        // Stop the flow both ways without closing anything: bytes written by either side go nowhere.
        for (const { client, server: up } of pairs) {
          client.unpipe();
          up.unpipe();
          client.pause();
          up.pause();
        }
        return;
      }
      for (const { client, server: up } of [...pairs]) {
        client.resetAndDestroy();
        up.destroy();
      }
      pairs.clear();
      if (next === 'refuse') {
        // The server keeps no listening socket, so connects fail with ECONNREFUSED. close() waits for
        // connections, which are all gone now.
        await stopListening();
      }
    },
    async restore() {
      if (mode === null) return;
      const was = mode;
      mode = null;
      if (was === 'blackhole') {
        // Connections that were black-holed are dead to their clients (they may have timed out mid-message).
        for (const { client, server: up } of [...pairs]) {
          client.resetAndDestroy();
          if (up !== client) up.destroy();
        }
        pairs.clear();
      }
      // Same port again: clients hold URLs with it. Another process taking it meanwhile is a test failure we
      // would see as EADDRINUSE, not a silent pass.
      if (was === 'refuse') await listen(port);
    },
    async close() {
      for (const { client, server: up } of [...pairs]) {
        client.destroy();
        up.destroy();
      }
      pairs.clear();
      if (mode !== 'refuse') await stopListening();
      mode = 'refuse';
    },
  };
}

/** The host and port of a service URL (postgres://, redis://, http://), defaulting the port by scheme. */
export function upstreamOf(url: string): { host: string; port: number } {
  const u = new URL(url);
  const defaults: Record<string, number> = {
    'postgres:': 5432,
    'postgresql:': 5432,
    'redis:': 6379,
    'http:': 80,
    'https:': 443,
  };
  return { host: u.hostname || '127.0.0.1', port: u.port ? Number(u.port) : (defaults[u.protocol] ?? 0) };
}
