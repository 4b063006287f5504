import { createHash } from 'node:crypto';
import { chmod, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { DatabaseHandle } from '@atskills/db';
import type { CrawlControl } from '@atskills/queue';
import type { Logger } from 'pino';
import { z } from 'zod';
import { runCli } from '../cli.js';
import type { CliAnswer } from './admin-client.js';
import { streamAdminCrawl } from './admin-crawl.js';

/**
 * The admin socket of a hub on an embedded database: in the data folder, like the data it guards; in the
 * temporary folder (named by the data folder's hash) when that path is too long for a unix socket.
 */
export function adminSocketPath(dataDir: string): string {
  const inData = path.resolve(dataDir, 'admin.sock');
  if (Buffer.byteLength(inData) <= 100) return inData;
  const id = createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 16);
  return path.join(tmpdir(), `atskills-admin-${id}.sock`);
}

const CliRequest = z.object({ argv: z.array(z.string().max(4096)).max(64) });

/**
 * Serves the admin CLI over a unix socket while a hub holds its embedded database: PGlite allows one
 * process per folder, so `npm run hub -- admin ...` hands its arguments to the running hub, which runs the
 * same commands on its own connection (as the operator, exactly as the CLI would), and `npm run crawl`
 * has the hub crawl on its own queue (POST /crawl, progress streamed back; see admin-crawl.ts). The socket
 * is mode 0600 in the data folder: whoever may connect could as well have opened the database files.
 */
export async function startAdminSocket(options: {
  socketPath: string;
  database: DatabaseHandle;
  logger: Logger;
  /** The hub's crawl queue (POST /crawl); without one the socket answers the CLI only. */
  queue?: CrawlControl;
}): Promise<{ close(): Promise<void> }> {
  await rm(options.socketPath, { force: true });
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (chunk: Buffer) => parts.push(chunk));
    req.on('end', async () => {
      if (req.method === 'POST' && req.url === '/crawl' && options.queue) {
        let body: unknown;
        try {
          body = JSON.parse(Buffer.concat(parts).toString('utf8') || '{}');
        } catch {
          body = undefined;
        }
        const outcome = await streamAdminCrawl({ queue: options.queue, db: options.database.db }, body, res);
        options.logger.info(outcome, 'admin crawl');
        return;
      }
      const answer: CliAnswer = { code: 2, stdout: '', stderr: '' };
      try {
        const parsed = CliRequest.safeParse(JSON.parse(Buffer.concat(parts).toString('utf8') || '{}'));
        if (req.method !== 'POST' || req.url !== '/cli' || !parsed.success) {
          answer.stderr = 'error: the admin socket takes POST /cli {"argv": [...]}\n';
        } else {
          answer.code = await runCli(parsed.data.argv, {
            stdout: (t) => {
              answer.stdout += t;
            },
            stderr: (t) => {
              answer.stderr += t;
            },
            database: options.database,
          });
          options.logger.info(
            { command: parsed.data.argv.slice(0, 2).join(' '), code: answer.code },
            'admin cli',
          );
        }
      } catch (err) {
        answer.code = 1;
        answer.stderr = `error: ${(err as Error).message}\n`;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.socketPath, resolve);
  });
  await chmod(options.socketPath, 0o600);
  return {
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(options.socketPath, { force: true });
    },
  };
}
