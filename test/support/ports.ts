/** Ports for tests that need a listener's address before the listener, or an address nothing answers. */
import { createServer } from 'node:net';

/** A port on 127.0.0.1 that was free a moment ago and is closed now: to listen on, or to connect to and get ECONNREFUSED. */
export async function unusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
