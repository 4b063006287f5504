/**
 * A TCP pass-through that counts the bytes each way, put in front of the hub to measure what a client
 * downloads (headers included, like the git server's log). Hand-written: a dozen lines of node:net.
 */
import { connect, createServer, type Socket } from 'node:net';

export interface CountingProxy {
  url: string;
  /** Bytes from the server to clients, and from clients to the server, since the last reset. */
  bytes(): { down: number; up: number };
  reset(): void;
  close(): Promise<void>;
}

/** Starts a proxy on 127.0.0.1 (a free port) to `target` (http://host:port). */
export async function startCountingProxy(target: string): Promise<CountingProxy> {
  const upstream = new URL(target);
  let down = 0;
  let up = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const server = connect(Number(upstream.port), upstream.hostname);
    for (const s of [client, server]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        server.destroy();
      });
    }
    client.on('data', (d: Buffer) => {
      up += d.length;
    });
    server.on('data', (d: Buffer) => {
      down += d.length;
    });
    client.pipe(server);
    server.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    bytes: () => ({ down, up }),
    reset() {
      down = 0;
      up = 0;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
