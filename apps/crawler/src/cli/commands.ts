import { readFile } from 'node:fs/promises';
import { createCrawler } from '@atskills/crawler';
import { failedRepositories, recentCrawlRuns } from '@atskills/db';
import { type DiscoverySource, parseDiscoverArg, parseRepositoryArg } from '@atskills/queue';
import { boot } from './boot.js';
import { formatProgress, progressReporter } from './progress.js';

/** Reads a list of repositories, one per line (`#` comments and blank lines ignored). */
export async function readReposFile(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8');
  return text
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter(Boolean)
    .map(parseRepositoryArg);
}

export interface CrawlCommandOptions {
  repos?: string;
  reposFile?: string;
  discover?: string;
  force?: boolean;
  /** Only enqueue (BullMQ mode: running workers do the work). */
  enqueueOnly?: boolean;
}

/** Resolves the command's options to a discovery source and run kind. */
export async function sourceOf(options: CrawlCommandOptions) {
  const chosen = [options.repos, options.reposFile, options.discover].filter((v) => v !== undefined).length;
  if (chosen !== 1) throw new Error('Give exactly one of --repos, --repos-file or --discover.');
  if (options.repos !== undefined) {
    const repos = options.repos
      .split(',')
      .filter((s) => s.trim() !== '')
      .map(parseRepositoryArg);
    return { kind: 'repos' as const, source: { kind: 'repos', repos } as DiscoverySource };
  }
  if (options.reposFile !== undefined) {
    return {
      kind: 'repos-file' as const,
      source: { kind: 'repos', repos: await readReposFile(options.reposFile) } as DiscoverySource,
    };
  }
  const source = parseDiscoverArg(options.discover ?? '');
  return { kind: source.kind as 'code-search' | 'org', source };
}

/** `crawler crawl ...` and `crawler rebuild`: start a run, work it in this process, show progress. */
export async function crawlCommand(options: CrawlCommandOptions & { rebuild?: boolean }): Promise<number> {
  const chosen = options.rebuild
    ? { kind: 'rebuild' as const, source: { kind: 'known' } as DiscoverySource }
    : await sourceOf(options);
  const { settings, logger, database } = await boot({ quiet: process.stderr.isTTY });
  const crawler = createCrawler({ db: database.db, settings, logger, work: !options.enqueueOnly });
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await crawler.close({ deadlineMs: settings.SHUTDOWN_TIMEOUT_MS });
    await database.close();
    process.exit(130);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    const runId = await crawler.startRun({
      kind: chosen.kind,
      source: chosen.source,
      force: options.force || options.rebuild,
    });
    logger.info({ runId, mode: crawler.mode }, 'crawl run started');
    if (options.enqueueOnly) {
      process.stdout.write(`run ${runId} enqueued\n`);
      return 0;
    }
    const reporter = progressReporter();
    const result = await crawler.waitForRun(runId, { pollMs: 500, onProgress: (p) => reporter.update(p) });
    reporter.done();
    const seconds = ((result.finishedAt ?? new Date()).getTime() - result.startedAt.getTime()) / 1000;
    process.stdout.write(
      `run ${runId} ${result.status} in ${seconds.toFixed(1)}s: ${formatProgress(result)}\n` +
        `outcomes: ${Object.entries(result.outcomes)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')}\n`,
    );
    return result.outcomes.failed > 0 ? 1 : 0;
  } finally {
    await crawler.close({ deadlineMs: settings.SHUTDOWN_TIMEOUT_MS });
    await database.close();
  }
}

/** `crawler worker`: runs jobs until SIGTERM/SIGINT, then finishes or releases its jobs within a deadline. */
export async function workerCommand(options: { shutdownDeadlineMs?: number } = {}): Promise<void> {
  const { settings, logger, database } = await boot();
  if (!settings.REDIS_URL)
    throw new Error('REDIS_URL is not set: `crawler worker` takes jobs from Redis (BullMQ).');
  const crawler = createCrawler({ db: database.db, settings, logger, work: true });
  logger.info(
    { concurrency: settings.CRAWL_CONCURRENCY, prefix: settings.CRAWL_QUEUE_PREFIX },
    'worker started',
  );
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      logger.info({ signal }, 'worker stopping');
      resolve();
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  await crawler.close({ deadlineMs: options.shutdownDeadlineMs ?? settings.SHUTDOWN_TIMEOUT_MS });
  await database.close();
  logger.info('worker stopped');
}

/** `crawler status`: queue counts, the last runs, repositories whose last crawl failed. */
export async function statusCommand(): Promise<void> {
  const { settings, logger, database } = await boot({ quiet: true });
  const crawler = createCrawler({ db: database.db, settings, logger, work: false });
  try {
    const out: string[] = [];
    if (crawler.mode === 'bullmq') {
      for (const [queue, counts] of Object.entries(await crawler.counts())) {
        out.push(
          `${queue}: ${Object.entries(counts)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')}`,
        );
      }
    } else {
      out.push('queues: in-process (no REDIS_URL); nothing is queued between commands');
    }
    const runs = await recentCrawlRuns(database.db, 5);
    out.push(runs.length ? 'recent runs:' : 'no crawl runs yet');
    for (const run of runs) {
      const progress = await crawler.progress(run.id);
      out.push(
        `  #${run.id} ${run.kind} ${run.status} started ${run.startedAt.toISOString()}: ${progress ? formatProgress(progress, (run.finishedAt ?? new Date()).getTime()) : ''}`,
      );
    }
    const failed = await failedRepositories(database.db, 20);
    if (failed.length) out.push('repositories whose last crawl failed:');
    for (const f of failed)
      out.push(`  ${f.owner}/${f.name} at ${f.lastCrawledAt?.toISOString()}: ${f.error ?? ''}`);
    process.stdout.write(`${out.join('\n')}\n`);
  } finally {
    await crawler.close();
    await database.close();
  }
}
