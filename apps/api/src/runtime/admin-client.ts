/**
 * The client half of the admin socket (runtime/admin-socket.ts): the admin CLI forwards its arguments to a
 * running hub with it. Apart from the server half because the server runs the CLI (cli.ts), and the CLI
 * must not import what imports it.
 */
import { request } from 'node:http';

/** What the hub answers a forwarded CLI command with. */
export interface CliAnswer {
  code: number;
  stdout: string;
  stderr: string;
}

/** Sends CLI arguments to a running hub's admin socket and returns its answer. */
export function forwardCli(socketPath: string, argv: string[]): Promise<CliAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(
      { socketPath, path: '/cli', method: 'POST', headers: { 'content-type': 'application/json' } },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (chunk: Buffer) => parts.push(chunk));
        res.on('end', () => {
          try {
            resolve(JSON.parse(Buffer.concat(parts).toString('utf8')) as CliAnswer);
          } catch (err) {
            reject(err);
          }
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ argv }));
  });
}
