import { request } from 'node:http';
import path from 'node:path';
import { type CrawlRunProgress, type EmbeddedLockOwner, readEmbeddedLock } from '@atskills/db';
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
 * The hub could not finish what the command asked of it (it stopped, refused, or is not there): the
 * message says so and what to do. Never a database problem of this process, which opens none on the
 * embedded default.
 */
export class HubCrawlError extends Error {
  override readonly name = 'HubCrawlError';
}

/** What a hub that stopped mid-crawl leaves the command to say (`cause`: the connection's last words). */
function hubStopped(runId: number | undefined, cause: string): HubCrawlError {
  const run = runId === undefined ? 'the crawl' : `crawl run ${runId}`;
  return new HubCrawlError(
    `the hub (\`npm start\`) stopped before ${run} finished (${cause}); start it again and run the crawl again (the hub ends the interrupted run when it starts).`,
  );
}

/**
 * Where the crawl goes without DATABASE_URL: the embedded database in `dataDir` belongs to one process, so
 * the running hub that holds it (its admin socket), or an error that says what to do when none runs.
 */
export function embeddedHubSocket(dataDir: string): string {
  return runningHub(dataDir).adminSocket!;
}

/** The address of the running hub that holds the embedded database in `dataDir` (see embeddedHubSocket). */
export function embeddedHubUrl(dataDir: string): string {
  return runningHub(dataDir).url!;
}

/** The running hub on the embedded database in `dataDir`, once it listens; else what to do, as an error. */
function runningHub(dataDir: string): EmbeddedLockOwner {
  const dbDir = path.resolve(dataDir, 'db');
  const owner = readEmbeddedLock(dbDir);
  if (owner?.kind === 'hub' && owner.adminSocket && owner.url) return owner;
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
            settle(() => reject(new HubCrawlError(`the hub refused the crawl: ${event.message}`)));
          } else {
            // A hub started from an older build answers only the admin CLI on this socket.
            settle(() =>
              reject(new HubCrawlError('the running hub does not take crawls: restart it (`npm start`)')),
            );
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
          settle(() => reject(hubStopped(runId, 'it closed the connection')));
        });
        // The hub died mid-answer (killed, crashed): its socket reset, which says nothing about a database.
        res.on('error', (err) => settle(() => reject(hubStopped(runId, err.message))));
      },
    );
    req.on('error', (err) =>
      settle(() =>
        reject(
          runId === undefined
            ? new HubCrawlError(
                `cannot reach the hub at ${socketPath} (${err.message}); check that \`npm start\` runs, then run this again.`,
              )
            : hubStopped(runId, err.message),
        ),
      ),
    );
    req.end(JSON.stringify(body));
  });
}

/** What `status --repo` shows of one repository: GET /v1/repos's answer (or the same read from the database). */
export interface ShownStatus {
  owner: string;
  name: string;
  status: string;
  headRevision: string | null;
  lastCrawledAt: string | null;
  skills: string[];
  problems: { path: string; code: string; message: string; line?: number }[];
}

/**
 * GET /v1/repos/<owner>/<repo> of the running hub at `hubUrl`: the repository's status as the hub serves
 * it, or where it moved (the hub answers a renamed repository with 301).
 */
export async function repositoryStatusThroughHub(
  hubUrl: string,
  owner: string,
  repo: string,
): Promise<ShownStatus | { movedTo: { owner: string; name: string } }> {
  const url = `${hubUrl}/v1/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`;
  let res: Response;
  try {
    res = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(30_000) });
  } catch (error) {
    throw new HubCrawlError(
      `cannot reach the hub at ${hubUrl} (${(error as Error).message}); check that \`npm start\` runs, then run this again.`,
    );
  }
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  // A moved repository's Location is its status URL under the new name: /v1/repos/<owner>/<name>.
  const moved =
    res.status === 301 ? /\/v1\/repos\/([^/]+)\/([^/?#]+)$/.exec(res.headers.get('location') ?? '') : null;
  if (moved) {
    return { movedTo: { owner: decodeURIComponent(moved[1]!), name: decodeURIComponent(moved[2]!) } };
  }
  if (!res.ok) {
    throw new HubCrawlError(
      `the hub answered ${res.status} for ${owner}/${repo}: ${String(body.detail ?? body.title ?? '')}`,
    );
  }
  return body as unknown as ShownStatus;
}
