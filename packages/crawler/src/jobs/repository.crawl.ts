import {
  cachedSafetyVerdicts,
  contentVerdictsFor,
  type Database,
  ensureRepository,
  moveRepository,
  type ReportEntry,
  type RepositoryIndexWrite,
  type SeenSkill,
  startRepositoryJob,
  storedSkillRevisions,
  withContentVerdict,
  writeRepositoryIndex,
} from '@atskills/db';
import {
  caseWarnings,
  findSkillFolders,
  formatIdentity,
  githubGitUrl,
  MENU_CAP,
  parseIdentity,
  type SafetyFinding,
  SKILL_FILE,
  skillFiles,
  type TreeEntry,
} from '@atskills/protocol';
import { type SkillContent, type SkillContentInput, skillContent } from '@atskills/protocol/content';
import { GitError } from '@atskills/protocol/node';
import type { RepositoryJobData } from '@atskills/queue';
import type { Logger } from 'pino';
import type { CrawlerSettings } from '../config.js';
import type { ContentPool } from '../content/content-pool.js';
import { probeHead, RemoteSnapshot } from '../git/remote-snapshot.js';
import type { GitSlots } from '../git-slots.js';
import type { GithubClient, MetadataResult } from '../github/github-client.js';
import { RateLimitedError } from '../github/rate-limited-error.js';
import { abortedByShutdown } from '../shutdown.js';
import { completeRuns } from './run-completion.js';
import { SCANNER_VERSION } from './safety-verdict.js';
import type { UnchangedReportBatch } from './unchanged-batch.js';

/** What every job function needs (passed in; nothing is read from globals). */
export interface CrawlDeps {
  db: Database;
  settings: CrawlerSettings;
  github: GithubClient;
  logger: Logger;
  /** Taken before a job's first git process: how many jobs fetch and parse at once. */
  gitSlots: GitSlots;
  /** The threads that parse, count tokens and scan. */
  contentPool: ContentPool;
  /** Where jobs that found their repository unchanged write their reports, together. */
  unchangedReports: UnchangedReportBatch;
}

/** Per-run state a queue gives a job function. */
export interface JobContext {
  /** Aborted on the job timeout or on shutdown; git processes are killed with it. */
  signal: AbortSignal;
  /** True on the last attempt: a retryable failure is then recorded instead of thrown. */
  finalAttempt: boolean;
  /** Starts the job timeout again (once a git slot is taken: waiting for one is not the job's slowness). */
  restartTimeout?: () => void;
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

/**
 * Folders holding more than K skills: each skill is listed, but the folder's menu answers 422 over-cap, so
 * the author learns why `@skills:gh:owner/repo/folder` does not work.
 */
function overCapProblems(skillFolders: string[]): ReportEntry[] {
  const below = new Map<string, number>();
  for (const folder of skillFolders) {
    const parts = folder === '' ? [] : folder.split('/');
    for (let depth = 0; depth < parts.length; depth++) {
      const ancestor = parts.slice(0, depth).join('/');
      below.set(ancestor, (below.get(ancestor) ?? 0) + 1);
    }
  }
  return [...below]
    .filter(([, count]) => count > MENU_CAP)
    .map(([folder, count]) => ({
      path: folder,
      code: 'over-cap',
      message: `${count} skills under ${folder === '' ? 'the repository root' : folder}: more than the ${MENU_CAP} a menu lists, so referencing this folder answers over-cap; reference a sub-folder or a skill.`,
    }));
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** One repository job in flight: what every phase reads, and the warnings they collect. */
interface RepositoryJob {
  deps: CrawlDeps;
  data: RepositoryJobData;
  ctx: JobContext;
  repository: Awaited<ReturnType<typeof ensureRepository>>;
  /** The name the repository goes by: GitHub's answer on a renamed or transferred one names the new one. */
  owner: string;
  repo: string;
  log: Logger;
  startedAt: Date;
  /** The git URL and what every git process of the job gets (token, abort signal). */
  remote: { url: string; token?: string; signal: AbortSignal };
  warnings: ReportEntry[];
  errors: ReportEntry[];
  /** Logs that a phase ended, with the time since the job started. */
  phaseDone(name: string): void;
}

/** The parts of a report every outcome states (the rest is defaulted by `report`). */
type ReportParts = Pick<RepositoryIndexWrite, 'outcome' | 'skills'> &
  Partial<Omit<RepositoryIndexWrite, 'repositoryId' | 'runId' | 'startedAt'>>;

/**
 * Crawls one repository: probe the head (skip when unchanged), fetch trees without blobs, apply the leaf
 * rule, download the changed skill folders' blobs under the size limit, parse, scan, and write everything
 * in one transaction. Idempotent: a redelivered job whose run already has a report does nothing, and a
 * job killed before its commit is redone from the stored head.
 */
export async function crawlRepository(
  deps: CrawlDeps,
  data: RepositoryJobData,
  ctx: JobContext,
): Promise<RepositoryJobResult> {
  const job = await openJob(deps, data, ctx);
  if (!job) {
    await completeRun(deps, data.runId);
    return { outcome: 'duplicate', skills: 0, bytesDownloaded: 0 };
  }
  let snapshot: RemoteSnapshot | null = null;
  let releaseSlot: (() => void) | null = null;
  try {
    const metadata = await fetchMetadata(job);
    if (metadata.gone) return await finish(job, failureReport(REPOSITORY_GONE, true));
    // Its skills leave the public index: team links are the only way a private repository enters the hub.
    if (metadata.private) return await finish(job, failureReport(REPOSITORY_PRIVATE, true));
    if (unchangedByMetadata(job, metadata)) return await finishUnchanged(job);
    releaseSlot = await deps.gitSlots.acquire();
    ctx.restartTimeout?.();
    const probed = await probe(job, metadata);
    if ('report' in probed) return await finish(job, probed.report);

    const { url, token, signal } = job.remote;
    snapshot = await RemoteSnapshot.open(url, { token, signal, workDir: deps.settings.crawlWorkDir });
    const tree = await fetchTree(job, snapshot, probed.head);
    if (!tree) return await finish(job, emptyReport(metadata.write, { commit: null, branch: null }));
    const folders = await leafRule(job, tree);
    const blobs = await fetchBlobs(job, snapshot, folders.changed);
    const skills = await buildContent(job, tree, folders, blobs);
    const bytes = await snapshot.bytesDownloaded();
    job.phaseDone('parsed');
    return await finish(job, {
      outcome: 'indexed',
      head: { commit: tree.commit, branch: tree.branch },
      metadata: metadata.write,
      skills,
      bytesDownloaded: bytes,
    });
  } catch (error) {
    return await finish(job, failureOf(job, error));
  } finally {
    await snapshot?.dispose();
    releaseSlot?.();
  }
}

/** Phase 0: the repository's row; null when this run already has its report (a redelivered job). */
async function openJob(
  deps: CrawlDeps,
  data: RepositoryJobData,
  ctx: JobContext,
): Promise<RepositoryJob | null> {
  const { db, settings, logger } = deps;
  const { repository, reported } = await startRepositoryJob(db, data.owner, data.repo, data.runId);
  if (reported) return null;
  const log = logger.child({ repo: `${data.owner}/${data.repo}`, runId: data.runId });
  const startedAt = new Date();
  return {
    deps,
    data,
    ctx,
    repository,
    owner: data.owner,
    repo: data.repo,
    log,
    startedAt,
    remote: {
      url: githubGitUrl(settings.gitBaseUrl, data.owner, data.repo),
      token: settings.githubToken,
      signal: ctx.signal,
    },
    warnings: [],
    errors: [],
    phaseDone: (name) => log.debug({ phase: name, ms: Date.now() - startedAt.getTime() }, 'phase done'),
  };
}

type MetadataWrite = RepositoryIndexWrite['metadata'];

/**
 * Phase 1: repository metadata (stars, licence, ...), read by GitHub's numeric id once the hub knows it
 * (renames and transfers keep it, so the answer says where the repository lives now), else by name. The
 * answer is also what proves the repository public (SPEC 2.8): the ETag is sent only when a 304 settles
 * the crawl (the stored head was read while GitHub said public); otherwise the full answer is read. A
 * rate limit propagates (the job is delayed); other REST trouble fails the job, since without GitHub's
 * answer nothing says the repository is public.
 */
async function fetchMetadata(
  job: RepositoryJob,
): Promise<{ gone: boolean; private: boolean; notModified: boolean; write: MetadataWrite }> {
  const { deps, data, repository } = job;
  const etag = data.force || !isSettled(repository) ? null : repository.metadataEtag;
  let metadata: MetadataResult;
  try {
    metadata = repository.githubId
      ? await deps.github.repositoryById(repository.githubId, etag)
      : await deps.github.repositoryMetadata(data.owner, data.repo, etag);
    if (metadata.status === 'not-found' && repository.githubId) {
      // The repository the hub knew is gone; one made at the same name since is another repository.
      metadata = await deps.github.repositoryMetadata(data.owner, data.repo, null);
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
  if (metadata.status === 'ok') await followRename(job, metadata.metadata);
  return {
    gone: metadata.status === 'not-found',
    private: metadata.status === 'ok' && metadata.private,
    notModified: metadata.status === 'not-modified',
    write: metadata.status === 'ok' ? { etag: metadata.etag, ...metadata.metadata } : undefined,
  };
}

/**
 * GitHub answers a renamed or transferred repository's old name with a redirect to its new one: the skills
 * move to the new identities (the old ones answer 301) and the job goes on under the new name.
 */
async function followRename(
  job: RepositoryJob,
  current: { owner: string; name: string; githubId?: number | null },
): Promise<void> {
  const renamed =
    current.owner.toLowerCase() !== job.owner.toLowerCase() ||
    current.name.toLowerCase() !== job.repo.toLowerCase();
  if (!renamed) return;
  const { db, settings } = job.deps;
  const moved = await moveRepository(
    db,
    { owner: job.owner, name: job.repo },
    { owner: current.owner, name: current.name, githubId: current.githubId ?? null },
  );
  job.log.info(
    { to: `${current.owner}/${current.name}`, skills: moved.identities.length },
    'repository moved',
  );
  job.owner = current.owner;
  job.repo = current.name;
  job.repository = await ensureRepository(db, job.owner, job.repo, { started: true });
  job.remote.url = githubGitUrl(settings.gitBaseUrl, job.owner, job.repo);
}

type Head = { commit: string | null; branch: string | null };

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
    head: { commit: repository.headRevision, branch: repository.defaultBranch },
    warnings: job.warnings,
    errors: job.errors,
    startedAt: job.startedAt,
  });
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
 * Phase 2: is there anything to fetch? An unchanged or empty repository ends here with its report;
 * otherwise the head to fetch (null when not probed: a new repository or a forced crawl goes straight to
 * the clone, which reads the head anyway).
 */
async function probe(
  job: RepositoryJob,
  metadata: { notModified: boolean; write: MetadataWrite },
): Promise<{ report: ReportParts } | { head: Head | null }> {
  const { data, repository } = job;
  const settled = isSettled(repository);
  // A repository seen before is probed (one ls-refs request), so an unchanged one costs nothing more.
  const head = !data.force && repository.headRevision !== null ? await probeHeadOrExplain(job.remote) : null;
  job.phaseDone('probe');
  if (settled && head !== null && head.commit === repository.headRevision) {
    return { report: unchangedReport(metadata.write, head) };
  }
  // An empty repository: no commits, so no skills.
  if (head !== null && head.commit === null) return { report: emptyReport(metadata.write, head) };
  return { head };
}

interface FetchedTree {
  commit: string;
  rootTree: string;
  branch: string | null;
  entries: TreeEntry[];
}

/** Phase 3: commits and trees without blobs, and the listing; null for a repository without commits. */
async function fetchTree(
  job: RepositoryJob,
  snapshot: RemoteSnapshot,
  head: Head | null,
): Promise<FetchedTree | null> {
  const fetched = await snapshot.fetchTrees(head?.branch ?? null);
  if (fetched.commit === null) return null;
  const entries = await snapshot.listTree();
  job.phaseDone('trees');
  job.warnings.push(...treeWarnings(entries));
  return { commit: fetched.commit, rootTree: fetched.rootTree, branch: fetched.branch, entries };
}

interface SkillFolder {
  path: string;
  identity: string;
  revision: string;
}

/**
 * Phase 4: the leaf rule over the listing: every skill folder with its identity and revision (its git
 * tree sha), and those whose revision differs from the stored one (all of them on a forced crawl).
 */
async function leafRule(
  job: RepositoryJob,
  tree: FetchedTree,
): Promise<{ all: SkillFolder[]; changed: SkillFolder[] }> {
  const { data } = job;
  const treeShaOf = new Map(tree.entries.filter((e) => e.type === 'dir').map((e) => [e.path, e.sha ?? '']));
  const all: SkillFolder[] = [];
  for (const folder of findSkillFolders(tree.entries)) {
    const identity = formatIdentity('gh', [job.owner, job.repo, folder].filter((p) => p !== '').join('/'));
    try {
      if (parseIdentity(identity).identity !== identity)
        throw new Error('the path does not survive normalisation');
    } catch (error) {
      job.errors.push({
        path: folder,
        code: 'bad-identity',
        message: `Not a valid identity: ${(error as Error).message}`,
      });
      continue;
    }
    all.push({
      path: folder,
      identity,
      revision: folder === '' ? tree.rootTree : (treeShaOf.get(folder) ?? ''),
    });
  }
  job.warnings.push(...overCapProblems(all.map((f) => f.path)));
  const stored = await storedSkillRevisions(job.deps.db, job.repository.id);
  const changed = all.filter((f) => data.force || stored.get(f.path)?.revision !== f.revision);
  return { all, changed };
}

/** Phase 5: the blobs of the changed folders, each file under the size limit (larger ones stay out). */
async function fetchBlobs(
  job: RepositoryJob,
  snapshot: RemoteSnapshot,
  changed: SkillFolder[],
): Promise<Map<string, Buffer>> {
  const blobs = await snapshot.fetchFolderBlobs(
    changed.map((f) => f.revision),
    job.deps.settings.crawlMaxFileBytes,
  );
  job.phaseDone('blobs');
  return blobs;
}

/**
 * Phase 6: what the index stores of each skill seen at this head: unchanged folders by reference; changed
 * ones with their files, parsed SKILL.md, tokens and safety flags (cached by content hash).
 */
async function buildContent(
  job: RepositoryJob,
  tree: FetchedTree,
  folders: { all: SkillFolder[]; changed: SkillFolder[] },
  blobs: Map<string, Buffer>,
): Promise<SeenSkill[]> {
  const listing = new SortedListing(tree.entries);
  const maxBytes = job.deps.settings.crawlMaxFileBytes;
  const { contentPool } = job.deps;
  const inputs = folders.changed.map((folder) =>
    folderInput(folder.path, listing.under(folder.path), blobs, maxBytes, job.repo),
  );
  const contents = await inChunks(inputs, (chunk) => contentPool.content(chunk));
  const prepared = folders.changed.map((folder, i) => {
    const content = contents[i]!;
    reportContentProblems(content, job.errors);
    return { folder, content };
  });
  const verdicts = await cachedSafetyVerdicts(
    job.deps.db,
    prepared.map((p) => p.content.contentHash),
    SCANNER_VERSION,
  );
  // Accepted "malicious" verdicts hold for their content whatever revision carries it (SPEC 2.8).
  const judged = await contentVerdictsFor(
    job.deps.db,
    prepared.map((p) => p.content.contentHash),
  );
  const seen: SeenSkill[] = [];
  const changedPaths = new Set(folders.changed.map((f) => f.path));
  for (const folder of folders.all) {
    if (!changedPaths.has(folder.path)) seen.push({ ...folder, commit: tree.commit });
  }
  const misses = prepared.filter((p) => !verdicts.has(p.content.contentHash)).map((p) => p.content);
  const scanned = await inChunks(misses, (chunk) => contentPool.scan(chunk));
  const scannedFlags = new Map(misses.map((content, i) => [content, scanned[i]!]));
  for (const { folder, content } of prepared) {
    const { contentHash, problems: _problems, flags: _deferred, ...stored } = content;
    const flags: SafetyFinding[] = withContentVerdict(
      verdicts.get(contentHash) ?? scannedFlags.get(content) ?? [],
      judged.get(contentHash),
    );
    seen.push({
      ...folder,
      commit: tree.commit,
      content: { ...stored, flags, verdict: { contentSha256: contentHash, scannerVersion: SCANNER_VERSION } },
    });
  }
  return seen;
}

/**
 * Phase 7: writes the report (and the skills) in one transaction, then completes the run when this was
 * its last repository (also when the report was there already: see completeRun).
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
    startedAt: job.startedAt,
    warnings: job.warnings,
    errors: job.errors,
    bytesDownloaded: 0,
    ...parts,
  };
}

const unchangedReport = (metadata: MetadataWrite, head: Head): ReportParts => ({
  outcome: 'unchanged',
  head,
  metadata,
  skills: null,
});

const emptyReport = (metadata: MetadataWrite, head: Head): ReportParts => ({
  outcome: 'indexed',
  head,
  metadata,
  skills: [],
});

const REPOSITORY_GONE = {
  code: 'repository-not-found',
  message: 'The repository does not exist or is no longer public (404).',
};

const REPOSITORY_PRIVATE = {
  code: 'repository-private',
  message:
    'The repository is private on GitHub: private repositories are never in the public index (link it to a team instead).',
};

/** A failure's report: nothing about the skills is known, so they stay as stored (unless it is gone). */
function failureReport(failure: { code: string; message: string }, gone = false): ReportParts {
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
  return failureReport({ code: 'crawl-failed', message: (error as Error).message });
}

/**
 * The content of one changed skill folder (`skillContent`, scan deferred) from the listing and the fetched
 * blobs; what it cannot index goes into `errors` as report entries. `rootName` names a root skill (the
 * repository, or a linked collection).
 */
export function folderContent(
  folder: string,
  entries: TreeEntry[],
  blobs: Map<string, Buffer>,
  maxBytes: number,
  rootName: string,
  errors: ReportEntry[],
): SkillContent<Buffer> {
  const content = skillContent(folderInput(folder, entries, blobs, maxBytes, rootName), { scan: false });
  reportContentProblems(content, errors);
  return content;
}

/** What skillContent needs of one skill folder: its files from the listing, with the fetched blobs. */
function folderInput(
  folder: string,
  entries: TreeEntry[],
  blobs: Map<string, Buffer>,
  maxBytes: number,
  rootName: string,
): SkillContentInput<Buffer> {
  const files = skillFiles(entries, folder).map((entry) => {
    // Only blobs over the limit are left out of the fetch; their size is known to exceed it, not exactly.
    const content = entry.sha ? blobs.get(entry.sha) : undefined;
    return content
      ? { path: entry.path, content }
      : { path: entry.path, content: null, size: 0, skipped: `larger than ${maxBytes} bytes` };
  });
  return { folder, rootName, files };
}

/** The content's problems that the report lists, appended to `errors`. */
function reportContentProblems(content: SkillContent<Buffer>, errors: ReportEntry[]): void {
  for (const problem of content.problems) {
    if (problem.code === 'reserved-path') {
      errors.push({ path: problem.path, code: problem.code, message: `${problem.message}; skipped` });
    } else if (problem.severity === 'error') {
      errors.push({
        path: problem.path,
        code: problem.code,
        message: problem.message,
        ...(problem.line !== undefined ? { line: problem.line } : {}),
      });
    }
  }
}

/** Folders per message to a content thread: jobs interleave, and one message stays a few MiB. */
const CONTENT_CHUNK = 32;

/** `work` over the items in chunks sent at once (the pool spreads them), results in item order. */
async function inChunks<T, R>(items: T[], work: (chunk: T[]) => Promise<R[]>): Promise<R[]> {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += CONTENT_CHUNK) chunks.push(items.slice(i, i + CONTENT_CHUNK));
  return (await Promise.all(chunks.map(work))).flat();
}

/**
 * The listing sorted by path, so the entries under a folder (a contiguous range: they share a prefix) are
 * found by binary search; handing skillFiles only that range keeps a repository of hundreds of skills
 * linear instead of skills x entries.
 */
class SortedListing {
  private readonly sorted: TreeEntry[];
  constructor(entries: TreeEntry[]) {
    this.sorted = [...entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  under(folder: string): TreeEntry[] {
    if (folder === '') return this.sorted;
    const prefix = `${folder}/`;
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.sorted[mid]!.path < prefix) lo = mid + 1;
      else hi = mid;
    }
    const out: TreeEntry[] = [];
    for (let i = lo; i < this.sorted.length && this.sorted[i]!.path.startsWith(prefix); i++)
      out.push(this.sorted[i]!);
    return out;
  }
}

async function probeHeadOrExplain(remote: RepositoryJob['remote']) {
  try {
    return await probeHead(remote.url, { token: remote.token, signal: remote.signal });
  } catch (error) {
    if (error instanceof GitError && error.kind === 'rate-limited') {
      throw new RateLimitedError(60_000, `git server rate limit: ${error.message}`);
    }
    throw error;
  }
}

/** Problems of the tree worth reporting: SKILL.md that is not a regular file, wrong-case skill.md. */
export function treeWarnings(entries: TreeEntry[]): ReportEntry[] {
  const out: ReportEntry[] = [];
  for (const entry of entries) {
    if (basename(entry.path) !== SKILL_FILE) continue;
    if (entry.type === 'symlink') {
      out.push({
        path: entry.path,
        code: 'skill-file-symlink',
        message: 'SKILL.md is a symlink; symlinks are never followed.',
      });
    } else if (entry.type === 'submodule') {
      out.push({
        path: entry.path,
        code: 'skill-file-submodule',
        message: 'SKILL.md is a submodule; submodules are never followed.',
      });
    }
  }
  for (const folder of caseWarnings(entries)) {
    out.push({
      path: folder,
      code: 'wrong-case-skill-file',
      message: 'The folder holds a skill.md in the wrong letter case; only SKILL.md makes a skill.',
    });
  }
  return out;
}
