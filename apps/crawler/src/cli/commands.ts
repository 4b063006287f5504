import { readFile } from 'node:fs/promises';
import { checkRedis, claimRunOwnership, createCrawler, loadSettings } from '@atskills/crawler';
import {
  type CrawlRunProgress,
  crawlReportsOfRun,
  failedRepositories,
  recentCrawlRuns,
  repositoryStatus,
} from '@atskills/db';
import { type DiscoverySource, parseDiscoverArg, parseRepositoryArg } from '@atskills/queue';
import { boot } from './boot.js';
import {
  crawlThroughHub,
  embeddedHubSocket,
  embeddedHubUrl,
  type HubCrawlFailure,
  repositoryStatusThroughHub,
  type ShownStatus,
} from './hub-crawl.js';
import { formatProgress, progressReporter } from './progress.js';

/** Reads a list of repositories, one per line (`#` comments and blank lines ignored). */
export async function readReposFile(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8');
  return text
    .split('\n')
    .map((line) => line.split('#', 1)[0]!.trim())
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

/** Prints how a run ended and every repository that failed or does not exist (any more), with its reason. */
function printRunResult(result: CrawlRunProgress, failed: HubCrawlFailure[]): void {
  const seconds = ((result.finishedAt ?? new Date()).getTime() - result.startedAt.getTime()) / 1000;
  process.stdout.write(
    `run ${result.id} ${result.status} in ${seconds.toFixed(1)}s: ${formatProgress(result)}\n` +
      `outcomes: ${Object.entries(result.outcomes)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}\n`,
  );
  for (const { repository, outcome, reasons } of failed) {
    process.stdout.write(`${outcome} ${repository}: ${reasons.join('; ') || 'no reason recorded'}\n`);
  }
}

/**
 * `crawler crawl ...` and `crawler rebuild`: start a run, work it in this process, show progress. Without
 * DATABASE_URL the index is the embedded database of a hub (`npm start`), which only that hub may open:
 * the hub runs the crawl on its own queue and streams the progress back.
 */
export async function crawlCommand(options: CrawlCommandOptions & { rebuild?: boolean }): Promise<number> {
  const chosen = options.rebuild
    ? { kind: 'rebuild' as const, source: { kind: 'known' } as DiscoverySource }
    : await sourceOf(options);
  const configured = loadSettings();
  if (!configured.databaseUrl) {
    const socket = embeddedHubSocket(configured.atskillsDataDir);
    const reporter = progressReporter();
    const outcome = await crawlThroughHub(
      socket,
      {
        kind: chosen.kind,
        source: chosen.source,
        force: !!(options.force || options.rebuild),
        wait: !options.enqueueOnly,
      },
      (p) => reporter.update(p),
    );
    if (outcome.enqueued) {
      process.stdout.write(`run ${outcome.runId} enqueued on the running hub\n`);
      return 0;
    }
    reporter.done();
    printRunResult(outcome.progress, outcome.failed);
    return outcome.failed.length > 0 ? 1 : 0;
  }
  // The queue's connections would retry a Redis that is not there for ever, logging each attempt: one
  // connect and PING first, and one line naming REDIS_URL when it does not answer (no run is started).
  if (configured.redisUrl) await checkRedis(configured.redisUrl);
  const { settings, logger, database } = await boot({ quiet: process.stderr.isTTY });
  // Without Redis the run's jobs live in this process: its runs carry this process's lock, so a hub or
  // crawler can end them if this one is killed (and this one ends those of processes that died).
  const ownership = settings.redisUrl
    ? undefined
    : await claimRunOwnership({ db: database.db, databaseUrl: settings.databaseUrl!, logger });
  const crawler = createCrawler({
    db: database.db,
    settings,
    logger,
    work: !options.enqueueOnly,
    ...(ownership ? { runOwner: ownership.key } : {}),
  });
  const closeAll = async () => {
    await crawler.close({ deadlineMs: settings.shutdownTimeoutMs });
    await ownership?.close();
    await database.close();
  };
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await closeAll();
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
    const failed = (await crawlReportsOfRun(database.db, runId))
      .filter((r) => r.report.outcome === 'failed' || r.report.outcome === 'gone')
      .map(({ owner, name, report }) => ({
        repository: `${owner}/${name}`,
        outcome: report.outcome,
        reasons: report.errors.map((e) => `${e.code}: ${e.message}`),
      }))
      .sort((a, b) => a.repository.localeCompare(b.repository));
    printRunResult(result, failed);
    return failed.length > 0 ? 1 : 0;
  } finally {
    await closeAll();
  }
}

/** `crawler worker`: runs jobs until SIGTERM/SIGINT, then finishes or releases its jobs within a deadline. */
export async function workerCommand(options: { shutdownDeadlineMs?: number } = {}): Promise<void> {
  const { settings, logger, database } = await boot();
  if (!settings.redisUrl)
    throw new Error('REDIS_URL is not set: `crawler worker` takes jobs from Redis (BullMQ).');
  const crawler = createCrawler({ db: database.db, settings, logger, work: true });
  logger.info(
    { concurrency: settings.crawlConcurrency, prefix: settings.crawlQueuePrefix },
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
  await crawler.close({ deadlineMs: options.shutdownDeadlineMs ?? settings.shutdownTimeoutMs });
  await database.close();
  logger.info('worker stopped');
}

/**
 * `crawler status --repo owner/name`: one repository's index status, skills and problems (as GET
 * /v1/repos). With DATABASE_URL it reads the database; on the embedded default, which only the running hub
 * may open, it asks that hub.
 */
export async function repositoryStatusCommand(text: string): Promise<number> {
  const [owner = '', repo = ''] = parseRepositoryArg(text).split('/');
  const answer = loadSettings().databaseUrl
    ? await statusFromDatabase(owner, repo)
    : await repositoryStatusThroughHub(embeddedHubUrl(loadSettings().atskillsDataDir), owner, repo);
  if ('movedTo' in answer) {
    process.stdout.write(`${owner}/${repo} moved to ${answer.movedTo.owner}/${answer.movedTo.name}\n`);
    return 0;
  }
  const out = [
    `${answer.owner}/${answer.name}: ${answer.status}`,
    `  head ${answer.headRevision ?? '-'}, last crawled ${answer.lastCrawledAt ?? 'never'}`,
    `  skills (${answer.skills.length}):`,
    ...answer.skills.map((identity) => `    ${identity}`),
    `  problems (${answer.problems.length}):`,
    ...answer.problems.map(
      (p) => `    ${p.path || '(repository)'}${p.line ? `:${p.line}` : ''} ${p.code}: ${p.message}`,
    ),
  ];
  process.stdout.write(`${out.join('\n')}\n`);
  return answer.status === 'failed' ? 1 : 0;
}

/** The repository's status read from DATABASE_URL. */
async function statusFromDatabase(
  owner: string,
  repo: string,
): Promise<ShownStatus | { movedTo: { owner: string; name: string } }> {
  const { database } = await boot({ quiet: true });
  try {
    const status = await repositoryStatus(database.db, owner, repo);
    if ('movedTo' in status) return status;
    return { ...status, lastCrawledAt: status.lastCrawledAt?.toISOString() ?? null };
  } finally {
    await database.close();
  }
}

/** `crawler status`: queue counts, the last runs, repositories whose last crawl failed. */
export async function statusCommand(options: { repo?: string } = {}): Promise<number> {
  if (options.repo !== undefined) return repositoryStatusCommand(options.repo);
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
    if (failed.length) out.push('repositories whose last crawl failed or found them gone:');
    for (const f of failed)
      out.push(`  ${f.owner}/${f.name} at ${f.lastCrawledAt?.toISOString()}: ${f.error ?? ''}`);
    process.stdout.write(`${out.join('\n')}\n`);
    return 0;
  } finally {
    await crawler.close();
    await database.close();
  }
}
