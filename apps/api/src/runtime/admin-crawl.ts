import type { ServerResponse } from 'node:http';
import { type CrawlRunProgress, crawlReportsOfRun, type Database } from '@atskills/db';
import { type CrawlControl, DiscoverySource } from '@atskills/queue';
import { z } from 'zod';

/**
 * What `npm run crawl` sends a running hub on an embedded database (POST /crawl on the admin socket): the
 * run the command would have started itself. The command resolves `--repos-file` on its side (the path
 * is the caller's), so the hub receives repository lists and discovery sources only.
 */
export const AdminCrawlRequest = z.object({
  kind: z.enum(['repos', 'repos-file', 'code-search', 'org', 'rebuild']),
  source: DiscoverySource,
  force: z.boolean().default(false),
  /** False: answer once the run is enqueued (`--enqueue-only`). */
  wait: z.boolean().default(true),
});
export type AdminCrawlRequest = z.infer<typeof AdminCrawlRequest>;

/** A repository the run found failed or gone, with its reasons. */
export interface AdminCrawlFailure {
  repository: string;
  outcome: string;
  reasons: string[];
}

/**
 * One line of the answer (newline-delimited JSON): `started`, then `progress` while the run goes on, then
 * `finished` (with the failed repositories) or `error`. Dates are ISO strings.
 */
export type AdminCrawlEvent =
  | { event: 'started'; runId: number; mode: string }
  | { event: 'progress'; progress: WireProgress }
  | { event: 'finished'; progress: WireProgress; failed: AdminCrawlFailure[] }
  | { event: 'error'; message: string };

type WireProgress = Omit<CrawlRunProgress, 'startedAt' | 'finishedAt'> & {
  startedAt: string;
  finishedAt: string | null;
};

const wire = (p: CrawlRunProgress): WireProgress => ({
  ...p,
  startedAt: p.startedAt.toISOString(),
  finishedAt: p.finishedAt?.toISOString() ?? null,
});

/**
 * Runs a crawl on the hub's own queue for the admin socket and streams its progress to `res`. A caller
 * that goes away (Ctrl-C) stops the stream, not the run: the hub finishes it, as it would a scheduled one.
 */
export async function streamAdminCrawl(
  deps: { queue: CrawlControl; db: Database; pollMs?: number },
  body: unknown,
  res: ServerResponse,
): Promise<{ runId?: number; status: string }> {
  let open = true;
  res.on('close', () => {
    open = false;
  });
  res.writeHead(200, { 'content-type': 'application/x-ndjson' });
  const send = (event: AdminCrawlEvent) => {
    if (open) res.write(`${JSON.stringify(event)}\n`);
  };
  const parsed = AdminCrawlRequest.safeParse(body);
  if (!parsed.success) {
    send({ event: 'error', message: `invalid crawl request: ${z.prettifyError(parsed.error)}` });
    res.end();
    return { status: 'invalid' };
  }
  const { kind, source, force, wait } = parsed.data;
  try {
    const runId = await deps.queue.startRun({ kind, source, force });
    send({ event: 'started', runId, mode: deps.queue.mode });
    if (!wait) {
      res.end();
      return { runId, status: 'enqueued' };
    }
    for (;;) {
      const progress = await deps.queue.progress(runId);
      if (!progress) throw new Error(`crawl run ${runId} does not exist`);
      if (progress.status !== 'running') {
        const failed = (await crawlReportsOfRun(deps.db, runId))
          .filter((r) => r.report.outcome === 'failed' || r.report.outcome === 'gone')
          .map((r) => ({
            repository: `${r.owner}/${r.name}`,
            outcome: r.report.outcome,
            reasons: r.report.errors.map((e) => `${e.code}: ${e.message}`),
          }))
          .sort((a, b) => a.repository.localeCompare(b.repository));
        send({ event: 'finished', progress: wire(progress), failed });
        res.end();
        return { runId, status: progress.status };
      }
      if (!open) return { runId, status: 'detached' };
      send({ event: 'progress', progress: wire(progress) });
      await new Promise((r) => setTimeout(r, deps.pollMs ?? 500));
    }
  } catch (err) {
    send({ event: 'error', message: (err as Error).message });
    res.end();
    return { status: 'error' };
  }
}
