import {
  crawlJobKey,
  type Database,
  ensureRepository,
  findOtherRepositoryWithGithubId,
  jobRepository,
  loggableMessage,
  moveRepository,
  type RepositoryIndexWrite,
  type RepositoryMetadata,
  RepositoryVanishedError,
  startRepositoryJob,
  storedSkillRevisions,
  writeRepositoryIndex,
} from '@atskills/db';
import { githubGitUrl } from '@atskills/protocol';
import { GitError } from '@atskills/protocol/node';
import type { RepositoryJobData } from '@atskills/queue';
import type { Logger } from 'pino';
import type { CrawlerSettings } from '../config.js';
import type { ContentPool } from '../content/content-pool.js';
import type { RemoteHead } from '../git/remote-snapshot.js';
import type { GitSlots } from '../git-slots.js';
import type { GithubClient, MetadataResult } from '../github/github-client.js';
import { RateLimitedError } from '../github/rate-limited-error.js';
import { type GitRemote, type PipelineRun, pipelineRun } from '../pipeline/pipeline-run.js';
import {
  type IndexedFolder,
  indexSkillFolder,
  type SkillFolderSource,
} from '../pipeline/skill-folder-pipeline.js';
import { abortedByShutdown } from '../shutdown.js';
import type { JobContext } from './job-context.js';
import { completeRuns } from './run-completion.js';
import type { UnchangedReportBatch } from './unchanged-batch.js';

/** What every job function needs (passed in; nothing is read from globals). */
export interface CrawlDeps {
  db: Database;
  settings: CrawlerSettings;
  github: GithubClient;
  logger: Logger;
  /** Taken before a job's first git process: how many jobs fetch and parse at once. */
  gitSlots: GitSlots;
  /** The processes that parse, count tokens and scan. */
  contentPool: ContentPool;
  /** Where jobs that found their repository unchanged write their reports, together. */
  unchangedReports: UnchangedReportBatch;
}

export type RepositoryJobOutcome = 'indexed' | 'unchanged' | 'failed' | 'gone' | 'duplicate';

export interface RepositoryJobResult {
  outcome: RepositoryJobOutcome;
  skills: number;
  bytesDownloaded: number;
}

/** Errors worth another attempt (the upstream or network may recover); others are recorded at once. */
function isRetryable(error: unknown): boolean {
  if (!(error instanceof GitError)) return true;
  // A missing ref is a branch that moved between the probe and the clone: the next attempt reads it again.
  return ['unreachable', 'server-error', 'ref-not-found', 'not-started', 'other'].includes(error.kind);
}

/** One repository job in flight: what every phase reads, and the warnings they collect. */
interface RepositoryJob extends PipelineRun {
  deps: CrawlDeps;
  data: RepositoryJobData;
  ctx: JobContext;
  repository: Awaited<ReturnType<typeof ensureRepository>>;
  /**
   * The job's name leads to its row only through a redirect (a rename the hub saw away from it): GitHub is
   * asked about that old name, since a repository made there since is another one.
   */
  redirected: boolean;
  /** The name the repository goes by: GitHub's answer on a renamed or transferred one names the new one. */
  owner: string;
  repo: string;
  startedAt: Date;
  /** The git URL and what every git process of the job gets (token, abort signal). */
  remote: GitRemote;
}

/** The parts of a report every outcome states (the rest is defaulted by `report`). */
type ReportParts = Pick<RepositoryIndexWrite, 'outcome' | 'skills'> &
  Partial<Omit<RepositoryIndexWrite, 'repositoryId' | 'runId' | 'queuedAs' | 'startedAt'>>;

/**
 * How often a job starts again because its repository row was merged away under it (another job of the
 * same repository under another name moved it): once is the race; more is a merge storm, left to a retry.
 */
const MAX_REOPENS = 3;

/**
 * Crawls one repository: its metadata from GitHub (skip when unchanged, refuse when private), then the
 * skill-folder pipeline over the whole repository (probe, trees without blobs, leaf rule, the changed
 * folders' blobs, content, verdicts) and one transaction that writes everything. Idempotent: a redelivered
 * job whose run already has a report writes nothing (and completes the run), and a job killed before its
 * commit is redone from the stored head.
 */
export async function crawlRepository(
  deps: CrawlDeps,
  data: RepositoryJobData,
  ctx: JobContext,
): Promise<RepositoryJobResult> {
  for (let reopened = 0; ; reopened++) {
    const job = await openJob(deps, data, ctx);
    if (!job) {
      await completeRun(deps, data.runId);
      return { outcome: 'duplicate', skills: 0, bytesDownloaded: 0 };
    }
    try {
      return await crawlOpened(job);
    } catch (error) {
      // Another job of the same repository (under another name) merged this job's row into the one that
      // stays: the job's name leads there now, so it starts again and reports on that row.
      if (!(error instanceof RepositoryVanishedError) || reopened >= MAX_REOPENS) throw error;
      job.log.info({ repositoryId: error.repositoryId }, 'repository row merged away; job starts again');
    }
  }
}

/** The job on its row: metadata, then the pipeline, then the report (a failure's when anything throws). */
async function crawlOpened(job: RepositoryJob): Promise<RepositoryJobResult> {
  const { deps, ctx } = job;
  let releaseSlot: (() => void) | null = null;
  try {
    const metadata = await fetchMetadata(job);
    if (metadata.gone) return await finish(job, failureReport(REPOSITORY_GONE, true));
    // Its skills leave the public index: team links are the only way a private repository enters the hub.
    // Its report reads exactly as a missing repository's (SPEC 2.2): an index request, an on-demand read or
    // the repository's page must not tell whether a private repository of that name exists. Only the
    // report's error, which operators alone read, says why.
    if (metadata.private)
      return await finish(job, { ...failureReport(REPOSITORY_GONE, true), error: REPOSITORY_PRIVATE_ERROR });
    if (unchangedByMetadata(job, metadata)) return await finishUnchanged(job);
    releaseSlot = await deps.gitSlots.acquire();
    ctx.restartTimeout?.();
    return await indexSkillFolder(deps, job, repositorySource(job, metadata.write));
  } catch (error) {
    return await finish(job, failureOf(job, error));
  } finally {
    releaseSlot?.();
  }
}

/**
 * Records a repository job that BullMQ ended without the job recording it: a job that stalled more often
 * than the limit (its workers died or hung) is failed without running again, and a final attempt can fail
 * after its report was written but before its run was completed. Writes a failure report unless the run
 * already has one for the repository, then completes the run, which would otherwise wait for ever.
 */
export async function recordAbandonedRepositoryJob(
  deps: CrawlDeps,
  data: RepositoryJobData,
  reason: string,
): Promise<void> {
  if (data.runId === null) return;
  const failure = { code: 'crawl-abandoned', message: `The crawl job ended without a result: ${reason}` };
  const write = async () =>
    writeRepositoryIndex(deps.db, {
      repositoryId: (await jobRepository(deps.db, data.owner, data.repo)).id,
      runId: data.runId,
      queuedAs: crawlJobKey(data.owner, data.repo),
      startedAt: new Date(),
      bytesDownloaded: 0,
      ...failureReport(failure),
    });
  // The row the job's name leads to may be merged away between the lookup and the write: look again.
  let written = await write().catch((error) => {
    if (error instanceof RepositoryVanishedError) return null;
    throw error;
  });
  written ??= await write();
  if (written.written) {
    deps.logger.warn(
      { repo: `${data.owner}/${data.repo}`, runId: data.runId, reason },
      'abandoned job recorded as failed',
    );
  }
  await completeRun(deps, data.runId);
}

/** Opens the job: the repository's row; null when this run already has its report (a redelivered job). */
async function openJob(
  deps: CrawlDeps,
  data: RepositoryJobData,
  ctx: JobContext,
): Promise<RepositoryJob | null> {
  const { db, settings, logger } = deps;
  const { repository, reported, redirected } = await startRepositoryJob(
    db,
    data.owner,
    data.repo,
    data.runId,
  );
  if (reported) return null;
  const startedAt = new Date();
  // Through a redirect the repository goes by the name the hub knows it by now.
  const owner = redirected ? repository.owner : data.owner;
  const repo = redirected ? repository.name : data.repo;
  return {
    ...pipelineRun(logger.child({ repo: `${data.owner}/${data.repo}`, runId: data.runId }), startedAt),
    deps,
    data,
    ctx,
    repository,
    redirected,
    owner,
    repo,
    startedAt,
    remote: {
      url: githubGitUrl(settings.gitBaseUrl, owner, repo),
      token: settings.githubToken,
      signal: ctx.signal,
    },
  };
}

type MetadataWrite = RepositoryIndexWrite['metadata'];

/**
 * What the pipeline is told of a public repository: the whole repository under `gh:owner/repo`, probed
 * when seen before (an unchanged one then costs one ls-refs request), settled when the probe finds the
 * head a finished crawl read; the report and the skills are written in one transaction.
 */
function repositorySource(
  job: RepositoryJob,
  metadata: MetadataWrite,
): SkillFolderSource<RepositoryJobResult> {
  const { data, repository } = job;
  return {
    remote: job.remote,
    folder: '',
    identityRoot: { source: 'gh', segments: [job.owner, job.repo] },
    rootName: job.repo,
    force: data.force,
    // A new repository or a forced crawl goes straight to the clone, which reads the head anyway.
    probe: !data.force && repository.headRevision !== null,
    knownHead: isSettled(repository) ? repository.headRevision : null,
    defaultBranch: null,
    overCapWarnings: true,
    storedRevisions: () => storedSkillRevisions(job.deps.db, repository.id),
    unchanged: (head) => finish(job, unchangedReport(metadata, head)),
    // An empty repository: no commits, so no skills.
    empty: (head) => finish(job, emptyReport(metadata, head)),
    write: (read) => finish(job, indexedReport(metadata, read)),
  };
}

/**
 * The metadata step: repository metadata (stars, licence, ...), read by GitHub's numeric id once the hub
 * knows it (renames and transfers keep it, so the answer says where the repository lives now), else by
 * name. A job whose name is an old name of the repository asks GitHub about that name first: GitHub drops
 * its redirect once another repository is made there, and that one is then indexed under the name. The
 * answer is also what proves the repository public (SPEC 2.8): the ETag is sent only when a 304
 * settles the crawl (the stored head was read while GitHub said public); otherwise the full answer is
 * read. A rate limit propagates (the job is delayed); other REST trouble fails the job, since without
 * GitHub's answer nothing says the repository is public.
 */
async function fetchMetadata(
  job: RepositoryJob,
): Promise<{ gone: boolean; private: boolean; notModified: boolean; write: MetadataWrite }> {
  const { deps, data, repository } = job;
  const etag = data.force || job.redirected || !isSettled(repository) ? null : repository.metadataEtag;
  let metadata: MetadataResult;
  try {
    if (job.redirected) {
      metadata = await deps.github.repositoryMetadata(data.owner, data.repo, null);
      if (metadata.status === 'not-found') {
        // Nothing answers at the old name: whether the moved repository is gone is its own answer.
        metadata = repository.githubId
          ? await deps.github.repositoryById(repository.githubId, null)
          : await deps.github.repositoryMetadata(repository.owner, repository.name, null);
      }
    } else {
      metadata = repository.githubId
        ? await deps.github.repositoryById(repository.githubId, etag)
        : await deps.github.repositoryMetadata(data.owner, data.repo, etag);
      if (metadata.status === 'not-found' && repository.githubId) {
        // The repository the hub knew is gone; one made at the same name since is another repository.
        metadata = await deps.github.repositoryMetadata(data.owner, data.repo, null);
      }
    }
  } catch (error) {
    if (error instanceof RateLimitedError) throw error;
    job.log.warn({ err: error }, 'repository metadata unavailable');
    throw new Error(
      `GitHub's REST API did not answer for ${data.owner}/${data.repo} (${(error as Error).message}); ` +
        'a repository is indexed only once GitHub says it is public',
    );
  }
  job.phaseDone('metadata');
  if (metadata.status === 'ok' && job.redirected && isAnotherRepository(job, metadata.metadata)) {
    await claimOldName(job);
  }
  // A private repository's new name is not followed: the old name would answer 301 to it for anyone.
  if (metadata.status === 'ok' && !metadata.private) await followRename(job, metadata.metadata);
  return {
    gone: metadata.status === 'not-found',
    private: metadata.status === 'ok' && metadata.private,
    notModified: metadata.status === 'not-modified',
    write: metadata.status === 'ok' ? { etag: metadata.etag, ...metadata.metadata } : undefined,
  };
}

/**
 * Whether GitHub's answer for a job's old name is another repository than the one the name redirected to:
 * another id, or (the hub never learnt the moved one's id) an answer under the old name itself, where
 * GitHub would have redirected to the moved repository.
 */
function isAnotherRepository(job: RepositoryJob, answer: RepositoryMetadata): boolean {
  const { data, repository } = job;
  if (repository.githubId && answer.githubId) return answer.githubId !== repository.githubId;
  return sameName(answer, data.owner, data.repo);
}

/**
 * A new repository lives at the job's old name: the stored redirect no longer applies (GitHub dropped it
 * too) and the name gets its own row (ensureRepository drops the redirect as it makes it); the moved
 * repository keeps its skills under its new name.
 */
async function claimOldName(job: RepositoryJob): Promise<void> {
  const { db, settings } = job.deps;
  const { owner, repo } = job.data;
  job.log.info(
    { redirectedTo: `${job.repository.owner}/${job.repository.name}` },
    'new repository at an old name',
  );
  job.redirected = false;
  job.owner = owner;
  job.repo = repo;
  job.repository = await ensureRepository(db, owner, repo, { started: true });
  job.remote.url = githubGitUrl(settings.gitBaseUrl, owner, repo);
}

/**
 * Where GitHub says the repository lives, the hub's row must be, and only one: GitHub answers a renamed or
 * transferred repository's old name with a redirect to its new one, and a repository crawled under its new
 * name before the hub heard of the rename has a second row with the same GitHub id. Either way the rows
 * are moved and merged (moveRepository: the skills take the new identities, the old names answer 301, the
 * crawl reports stay) and the job goes on under the new name, on the row that stayed.
 */
async function followRename(job: RepositoryJob, current: RepositoryMetadata): Promise<void> {
  const { db, settings } = job.deps;
  const row = job.repository;
  const renamed = !sameName(current, row.owner, row.name) || !sameName(current, job.owner, job.repo);
  const githubId = current.githubId ?? null;
  const duplicate = githubId !== null && (await findOtherRepositoryWithGithubId(db, githubId, row.id));
  if (!renamed && !duplicate) return;
  const moved = await moveRepository(
    db,
    { owner: row.owner, name: row.name },
    { owner: current.owner, name: current.name, githubId },
  );
  job.log.info(
    { to: `${current.owner}/${current.name}`, skills: moved.identities.length, merged: moved.merged },
    'repository moved',
  );
  job.redirected = false;
  job.owner = current.owner;
  job.repo = current.name;
  job.repository = await ensureRepository(db, job.owner, job.repo, { started: true });
  job.remote.url = githubGitUrl(settings.gitBaseUrl, job.owner, job.repo);
}

/** Whether GitHub's answer names owner/name (GitHub names are case-insensitive). */
function sameName(answer: { owner: string; name: string }, owner: string, name: string): boolean {
  return (
    answer.owner.toLowerCase() === owner.toLowerCase() && answer.name.toLowerCase() === name.toLowerCase()
  );
}

/** The stored head was read by a crawl that finished (indexed, or confirmed unchanged). */
function isSettled(repository: RepositoryJob['repository']): boolean {
  return (
    repository.headRevision !== null &&
    (repository.lastCrawlOutcome === 'indexed' || repository.lastCrawlOutcome === 'unchanged')
  );
}

/**
 * GitHub's repository ETag changes with `pushed_at`, so a 304 on the metadata means nothing was pushed
 * since the stored head was read: unchanged, without a single git request (a forced crawl reads anyway).
 */
function unchangedByMetadata(job: RepositoryJob, metadata: { notModified: boolean }): boolean {
  return !job.data.force && metadata.notModified && isSettled(job.repository);
}

/**
 * The unchanged outcome of a 304: the report goes into the shared batch (one transaction for many
 * repositories), which also completes the run when this was its last repository.
 */
async function finishUnchanged(job: RepositoryJob): Promise<RepositoryJobResult> {
  job.phaseDone('probe');
  const { repository } = job;
  const result = await job.deps.unchangedReports.write({
    repositoryId: repository.id,
    runId: job.data.runId,
    queuedAs: crawlJobKey(job.data.owner, job.data.repo),
    head: { commit: repository.headRevision, branch: repository.defaultBranch },
    warnings: job.warnings,
    errors: job.errors,
    startedAt: job.startedAt,
  });
  if (result.vanished) throw new RepositoryVanishedError(repository.id);
  // The batch completes the runs it wrote a report for; a duplicate's run is completed here.
  if (!result.written) await completeRun(job.deps, job.data.runId);
  job.log.info({ outcome: 'unchanged', skills: result.skillsFound, bytes: 0 }, 'repository crawled');
  return {
    outcome: result.written ? 'unchanged' : 'duplicate',
    skills: result.skillsFound,
    bytesDownloaded: 0,
  };
}

/**
 * The write: the report (and the skills) in one transaction, then completes the run when this was its
 * last repository (also when the report was there already: see completeRun).
 */
async function finish(job: RepositoryJob, parts: ReportParts): Promise<RepositoryJobResult> {
  const write = report(job, parts);
  const result = await writeRepositoryIndex(job.deps.db, write);
  await completeRun(job.deps, job.data.runId);
  job.log.info(
    {
      outcome: write.outcome,
      skills: result.skillsFound,
      added: result.skillsAdded,
      removed: result.skillsRemoved,
      bytes: write.bytesDownloaded,
    },
    'repository crawled',
  );
  return {
    outcome: result.written ? write.outcome : 'duplicate',
    skills: result.skillsFound,
    bytesDownloaded: write.bytesDownloaded,
  };
}

/**
 * Completes the run when every repository of it has its report. Called by every job that ends with its
 * report in place, a duplicate too: the attempt that committed the report may have failed (or died)
 * before completing the run, and every later attempt finds the report and writes nothing, so without
 * this the run would stay running forever (completeRuns is idempotent).
 */
async function completeRun(deps: CrawlDeps, runId: number | null): Promise<void> {
  if (runId !== null) await completeRuns(deps, [runId]);
}

/** The whole report of the job from an outcome's parts. */
function report(job: RepositoryJob, parts: ReportParts): RepositoryIndexWrite {
  return {
    repositoryId: job.repository.id,
    runId: job.data.runId,
    queuedAs: crawlJobKey(job.data.owner, job.data.repo),
    startedAt: job.startedAt,
    warnings: job.warnings,
    errors: job.errors,
    bytesDownloaded: 0,
    ...parts,
  };
}

const indexedReport = (metadata: MetadataWrite, read: IndexedFolder): ReportParts => ({
  outcome: 'indexed',
  head: { commit: read.commit, branch: read.branch },
  metadata,
  skills: read.skills.map((s) => ({
    identity: s.identity,
    path: s.path,
    revision: s.revision,
    commit: read.commit,
    ...(s.content ? { content: s.content } : {}),
  })),
  bytesDownloaded: read.bytesDownloaded,
});

const unchangedReport = (metadata: MetadataWrite, head: RemoteHead): ReportParts => ({
  outcome: 'unchanged',
  head,
  metadata,
  skills: null,
});

const emptyReport = (metadata: MetadataWrite, head: RemoteHead): ReportParts => ({
  outcome: 'indexed',
  head,
  metadata,
  skills: [],
});

const REPOSITORY_GONE = {
  code: 'repository-not-found',
  message: 'The repository does not exist or is no longer public (404).',
};

/** Why a private repository's crawl ended, for operators (its public report is REPOSITORY_GONE's). */
const REPOSITORY_PRIVATE_ERROR =
  'The repository is private on GitHub: private repositories are never in the public index (link it to a team instead).';

/** A failure's report: nothing about the skills is known, so they stay as stored (unless it is gone). */
function failureReport(
  failure: { code: string; message: string },
  gone = false,
): ReportParts & Pick<RepositoryIndexWrite, 'warnings' | 'errors'> {
  return {
    outcome: gone ? 'gone' : 'failed',
    skills: null,
    repositoryGone: gone,
    // A failure's report holds only the failure, not what earlier phases noted.
    warnings: [],
    errors: [{ path: '', ...failure }],
    error: failure.message,
  };
}

/**
 * The report of a job that threw, or the error again when it is not the job's to record: a shutdown
 * releases the job to another worker, a rate limit delays it, and a retryable failure before the last
 * attempt is retried.
 */
function failureOf(job: RepositoryJob, error: unknown): ReportParts {
  if (error instanceof RateLimitedError || abortedByShutdown(job.ctx.signal)) throw error;
  // Not a failure of the crawl: the job starts again on the row that stayed (see crawlRepository).
  if (error instanceof RepositoryVanishedError) throw error;
  if (error instanceof GitError && error.kind === 'not-found') {
    return failureReport({ code: 'repository-not-found', message: error.message }, true);
  }
  if (error instanceof GitError && (error.kind === 'aborted' || error.kind === 'timeout')) {
    // Not retried: a hanging server would hold a worker for every attempt; the next crawl tries again.
    return failureReport({
      code: 'timeout',
      message: `Timed out after ${job.deps.settings.crawlJobTimeoutMs} ms: ${error.message}`,
    });
  }
  if (error instanceof GitError && error.kind === 'access-denied') {
    // Private or needs a token: not proof that it is gone, so its skills are kept.
    return failureReport({ code: 'access-denied', message: error.message });
  }
  if (isRetryable(error) && !job.ctx.finalAttempt) throw error;
  // A database error is told by its driver's words: the report is public, the SQL and its values are not.
  return failureReport({ code: 'crawl-failed', message: loggableMessage(error) });
}
