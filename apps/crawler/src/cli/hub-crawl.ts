import { request } from 'node:http';
import path from 'node:path';
import { type CrawlRunProgress, readEmbeddedLock } from '@atskills/db';
import type { DiscoverySource } from '@atskills/queue';

/** The crawl a command asks a running hub for (the body of POST /crawl on its admin socket). */
export interface HubCrawlRequest {
  kind: 'repos' | 'repos-file' | 'code-search' | 'org' | 'rebuild';
  source: DiscoverySource;
  force: boolean;
  wait: boolean;
}

/** A repository the run found failed or gone, with its reasons. */
export interface HubCrawlFailure {
  repository: string;
  outcome: string;
  reasons: string[];
}

/** How a crawl run by the hub ended (as the hub streamed it). */
export type HubCrawlOutcome =
  | { runId: number; enqueued: true }
  | { runId: number; enqueued: false; progress: CrawlRunProgress; failed: HubCrawlFailure[] };

type WireProgress = Omit<CrawlRunProgress, 'startedAt' | 'finishedAt'> & {
  startedAt: string;
  finishedAt: string | null;
};

const fromWire = (p: WireProgress): CrawlRunProgress => ({
  ...p,
  startedAt: new Date(p.startedAt),
  finishedAt: p.finishedAt === null ? null : new Date(p.finishedAt),
});

/**
 * Where the crawl goes without DATABASE_URL: the embedded database in `dataDir` belongs to one process, so
 * the running hub that holds it (its admin socket), or an error that says what to do when none runs.
 */
export function embeddedHubSocket(dataDir: string): string {
  const dbDir = path.resolve(dataDir, 'db');
  const owner = readEmbeddedLock(dbDir);
  if (owner?.kind === 'hub' && owner.adminSocket) return owner.adminSocket;
  if (owner?.kind === 'hub') {
    throw new Error(
      `The hub (pid ${owner.pid}) that holds the embedded database in ${dbDir} is still starting; run this again once it listens.`,
    );
  }
  if (owner) {
    throw new Error(
      `The embedded database in ${dbDir} is in use by another process (${owner.kind}, pid ${owner.pid}); wait for it to finish.`,
    );
  }
  throw new Error(
    `No hub is running on the embedded database in ${dbDir}. Start one with \`npm start\` (in another terminal), then run this again; or set DATABASE_URL to crawl into a PostgreSQL server.`,
  );
}

/**
 * Has the hub behind `socketPath` run the crawl on its own queue, reporting each progress line the hub
 * streams; resolves when the run has finished (or, with `wait: false`, once it is enqueued).
 */
export function crawlThroughHub(
  socketPath: string,
  body: HubCrawlRequest,
  onProgress: (p: CrawlRunProgress) => void,
): Promise<HubCrawlOutcome> {
  return new Promise((resolve, reject) => {
    let runId: number | undefined;
    let settled = false;
    const settle = (fn: () => void) => {
      if (!settled) {
        settled = true;
        fn();
      }
    };
    const req = request(
      { socketPath, path: '/crawl', method: 'POST', headers: { 'content-type': 'application/json' } },
      (res) => {
        let buffered = '';
        const handle = (line: string) => {
          const event = JSON.parse(line) as
            | { event: 'started'; runId: number }
            | { event: 'progress'; progress: WireProgress }
            | { event: 'finished'; progress: WireProgress; failed: HubCrawlFailure[] }
            | { event: 'error'; message: string };
          if (event.event === 'started') runId = event.runId;
          else if (event.event === 'progress') onProgress(fromWire(event.progress));
          else if (event.event === 'finished') {
            const progress = fromWire(event.progress);
            onProgress(progress);
            settle(() => resolve({ runId: progress.id, enqueued: false, progress, failed: event.failed }));
          } else if (event.event === 'error') {
            settle(() => reject(new Error(`the hub refused the crawl: ${event.message}`)));
          } else {
            // A hub started from an older build answers only the admin CLI on this socket.
            settle(() => reject(new Error('the running hub does not take crawls: restart it (`npm start`)')));
          }
        };
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffered += chunk;
          for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
            const line = buffered.slice(0, nl).trim();
            buffered = buffered.slice(nl + 1);
            if (line) {
              try {
                handle(line);
              } catch (err) {
                settle(() => reject(err));
              }
            }
          }
        });
        res.on('end', () => {
          if (!body.wait && runId !== undefined) settle(() => resolve({ runId: runId!, enqueued: true }));
          settle(() => reject(new Error('the hub closed the connection before the crawl finished')));
        });
        res.on('error', (err) => settle(() => reject(err)));
      },
    );
    req.on('error', (err) =>
      settle(() => reject(new Error(`cannot reach the hub at ${socketPath}: ${err.message}`))),
    );
    req.end(JSON.stringify(body));
  });
}
