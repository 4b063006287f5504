import { createHash } from 'node:crypto';
import {
  cachedSafetyVerdicts,
  crawlReportExists,
  type Database,
  ensureRepository,
  finishCompletedRuns,
  type ReportEntry,
  type RepositoryIndexWrite,
  refreshSearchStatistics,
  type SeenSkill,
  type SkillFile,
  storedSkillRevisions,
  writeRepositoryIndex,
} from '@atskills/db';
import {
  caseWarnings,
  findSkillFolders,
  formatIdentity,
  githubGitUrl,
  parseIdentity,
  reservedSkillPath,
  type SafetyFinding,
  SKILL_FILE,
  skillFiles,
  type TreeEntry,
  tryParseSkillMarkdown,
} from '@atskills/protocol';
import { countTokens } from '@atskills/protocol/tokens';
import type { RepositoryJobData } from '@atskills/queue';
import type { Logger } from 'pino';
import type { CrawlerSettings } from '../config.js';
import { probeHead, RemoteSnapshot } from '../git/remote-snapshot.js';
import { GitError } from '../git/run-git.js';
import type { GithubClient, MetadataResult } from '../github/github-client.js';
import { RateLimitedError } from '../github/rate-limited-error.js';
import { abortedByShutdown } from '../shutdown.js';
import { SCANNER_VERSION, scanSkill, skillContentHash } from './safety-verdict.js';

/** What every job function needs (passed in; nothing is read from globals). */
export interface CrawlDeps {
  db: Database;
  settings: CrawlerSettings;
  github: GithubClient;
  logger: Logger;
}

/** Per-run state a queue gives a job function. */
export interface JobContext {
  /** Aborted on the job timeout or on shutdown; git processes are killed with it. */
  signal: AbortSignal;
  /** True on the last attempt: a retryable failure is then recorded instead of thrown. */
  finalAttempt: boolean;
}

export type RepositoryJobOutcome = 'indexed' | 'unchanged' | 'failed' | 'gone' | 'duplicate';

export interface RepositoryJobResult {
  outcome: RepositoryJobOutcome;
  skills: number;
  bytesDownloaded: number;
}

/** Errors worth another attempt (the upstream or network may recover); others are recorded at once. */
function isRetryable(error: unknown): boolean {
  return !(error instanceof GitError) || error.kind === 'unavailable' || error.kind === 'other';
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

function relative(folder: string, path: string): string {
  return folder === '' ? path : path.slice(folder.length + 1);
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

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
  const { db, settings, logger } = deps;
  const log = logger.child({ repo: `${data.owner}/${data.repo}`, runId: data.runId });
  const repository = await ensureRepository(db, data.owner, data.repo);
  if (data.runId !== null && (await crawlReportExists(db, data.runId, repository.id))) {
    return { outcome: 'duplicate', skills: 0, bytesDownloaded: 0 };
  }
  const startedAt = new Date();
  const phase = (name: string) =>
    log.debug({ phase: name, ms: Date.now() - startedAt.getTime() }, 'phase done');
  const base: Pick<RepositoryIndexWrite, 'repositoryId' | 'runId' | 'startedAt'> = {
    repositoryId: repository.id,
    runId: data.runId,
    startedAt,
  };
  const finish = async (write: RepositoryIndexWrite, bytes: number): Promise<RepositoryJobResult> => {
    const result = await writeRepositoryIndex(db, write);
    if (data.runId !== null && (await finishCompletedRuns(db, [data.runId])).length > 0) {
      // Best effort: a run's index is complete without it, search is only slower until autovacuum runs.
      await refreshSearchStatistics(db).catch((err) =>
        log.warn({ err }, 'could not refresh search statistics after the run'),
      );
    }
    log.info(
      {
        outcome: write.outcome,
        skills: result.skillsFound,
        added: result.skillsAdded,
        removed: result.skillsRemoved,
        bytes,
      },
      'repository crawled',
    );
    return {
      outcome: result.written ? write.outcome : 'duplicate',
      skills: result.skillsFound,
      bytesDownloaded: bytes,
    };
  };
  const recordFailure = (code: string, message: string, gone = false) =>
    finish(
      {
        ...base,
        outcome: gone ? 'gone' : 'failed',
        skills: null,
        repositoryGone: gone,
        warnings: [],
        errors: [{ path: '', code, message }],
        error: message,
        bytesDownloaded: 0,
      },
      0,
    );

  // Repository metadata (stars, licence, ...): conditional on the stored ETag, so an unchanged repository
  // costs no rate limit. A rate limit propagates (the job is delayed); other REST trouble only loses metadata.
  let metadata: MetadataResult | null = null;
  const warnings: ReportEntry[] = [];
  try {
    metadata = await deps.github.repositoryMetadata(
      data.owner,
      data.repo,
      data.force ? null : repository.metadataEtag,
    );
  } catch (error) {
    if (error instanceof RateLimitedError) throw error;
    warnings.push({
      path: '',
      code: 'metadata-unavailable',
      message: `GitHub metadata: ${(error as Error).message}`,
    });
    log.warn({ err: error }, 'repository metadata unavailable');
  }
  phase('metadata');
  if (metadata?.status === 'not-found') {
    return recordFailure(
      'repository-not-found',
      'The repository does not exist or is no longer public (404).',
      true,
    );
  }
  const metadataWrite = metadata?.status === 'ok' ? { etag: metadata.etag, ...metadata.metadata } : undefined;

  const url = githubGitUrl(settings.GIT_BASE_URL, data.owner, data.repo);
  const remote = { token: settings.GITHUB_TOKEN, signal: ctx.signal };
  let snapshot: RemoteSnapshot | null = null;
  try {
    const settled =
      repository.headRevision !== null &&
      (repository.lastCrawlOutcome === 'indexed' || repository.lastCrawlOutcome === 'unchanged');
    // GitHub's repository ETag changes with `pushed_at`, so a 304 on the metadata means nothing was pushed
    // since the stored head was read: unchanged, without a single git request.
    if (!data.force && settled && metadata?.status === 'not-modified') {
      phase('probe');
      return await finish(
        {
          ...base,
          outcome: 'unchanged',
          head: { commit: repository.headRevision, branch: repository.defaultBranch },
          metadata: metadataWrite,
          skills: null,
          warnings,
          errors: [],
          bytesDownloaded: 0,
        },
        0,
      );
    }
    // Otherwise a repository seen before is probed (one ls-refs request) so an unchanged one costs nothing
    // more; a new one (or a forced crawl) goes straight to the clone, which reads the head anyway.
    const probe = !data.force && repository.headRevision !== null;
    const head = probe ? await probeHeadOrExplain(url, remote) : null;
    phase('probe');
    const unchanged =
      settled && head !== null && head.commit !== null && head.commit === repository.headRevision;
    if (unchanged) {
      return await finish(
        {
          ...base,
          outcome: 'unchanged',
          head,
          metadata: metadataWrite,
          skills: null,
          warnings,
          errors: [],
          bytesDownloaded: 0,
        },
        0,
      );
    }
    if (head !== null && head.commit === null) {
      // An empty repository: no commits, so no skills.
      return await finish(
        {
          ...base,
          outcome: 'indexed',
          head,
          metadata: metadataWrite,
          skills: [],
          warnings,
          errors: [],
          bytesDownloaded: 0,
        },
        0,
      );
    }

    snapshot = await RemoteSnapshot.open(url, { ...remote, workDir: settings.CRAWL_WORK_DIR });
    const fetched = await snapshot.fetchTrees(head?.branch ?? null);
    if (fetched.commit === null) {
      return await finish(
        {
          ...base,
          outcome: 'indexed',
          head: { commit: null, branch: null },
          metadata: metadataWrite,
          skills: [],
          warnings,
          errors: [],
          bytesDownloaded: 0,
        },
        0,
      );
    }
    const { commit, rootTree } = fetched;
    const entries = await snapshot.listTree();
    phase('trees');
    const errors: ReportEntry[] = [];
    warnings.push(...treeWarnings(entries));

    const treeShaOf = new Map(entries.filter((e) => e.type === 'dir').map((e) => [e.path, e.sha ?? '']));
    const stored = await storedSkillRevisions(db, repository.id);
    const folders: { path: string; identity: string; revision: string }[] = [];
    for (const folder of findSkillFolders(entries)) {
      const identity = formatIdentity(
        'gh',
        [data.owner, data.repo, folder].filter((p) => p !== '').join('/'),
      );
      try {
        if (parseIdentity(identity).identity !== identity)
          throw new Error('the path does not survive normalisation');
      } catch (error) {
        errors.push({
          path: folder,
          code: 'bad-identity',
          message: `Not a valid identity: ${(error as Error).message}`,
        });
        continue;
      }
      folders.push({
        path: folder,
        identity,
        revision: folder === '' ? rootTree : (treeShaOf.get(folder) ?? ''),
      });
    }
    const changed = folders.filter((f) => data.force || stored.get(f.path)?.revision !== f.revision);
    const blobs = await snapshot.fetchFolderBlobs(
      changed.map((f) => f.revision),
      settings.CRAWL_MAX_FILE_BYTES,
    );

    phase('blobs');
    // Content of each changed skill: files, parsed SKILL.md, tokens, safety flags (cached by content hash).
    const listing = new SortedListing(entries);
    const prepared: PreparedSkill[] = [];
    for (const folder of changed) {
      prepared.push(
        prepareSkill(folder, listing.under(folder.path), blobs, settings.CRAWL_MAX_FILE_BYTES, errors),
      );
      await yieldEvery(prepared.length);
    }
    const verdicts = await cachedSafetyVerdicts(
      db,
      prepared.map((p) => p.contentHash),
      SCANNER_VERSION,
    );
    const seen: SeenSkill[] = [];
    const changedPaths = new Set(changed.map((f) => f.path));
    for (const folder of folders) {
      if (!changedPaths.has(folder.path)) seen.push({ ...folder, commit });
    }
    for (const [i, p] of prepared.entries()) {
      await yieldEvery(i + 1);
      const flags: SafetyFinding[] = verdicts.get(p.contentHash) ?? scanSkill(p.texts, p.content.description);
      seen.push({
        identity: p.folder.identity,
        path: p.folder.path,
        revision: p.folder.revision,
        commit,
        content: {
          ...p.content,
          flags,
          verdict: { contentSha256: p.contentHash, scannerVersion: SCANNER_VERSION },
        },
      });
    }
    const bytes = await snapshot.bytesDownloaded();
    phase('parsed');
    return await finish(
      {
        ...base,
        outcome: 'indexed',
        head: { commit, branch: fetched.branch },
        metadata: metadataWrite,
        skills: seen,
        warnings,
        errors,
        bytesDownloaded: bytes,
      },
      bytes,
    );
  } catch (error) {
    // A shutdown releases the job to another worker; a rate limit delays it: neither is a failure.
    if (error instanceof RateLimitedError || abortedByShutdown(ctx.signal)) throw error;
    if (error instanceof GitError && error.kind === 'not-found') {
      return recordFailure('repository-not-found', error.message, true);
    }
    if (error instanceof GitError && error.kind === 'timeout') {
      // Not retried: a hanging server would hold a worker for every attempt; the next crawl tries again.
      return recordFailure(
        'timeout',
        `Timed out after ${settings.CRAWL_JOB_TIMEOUT_MS} ms: ${error.message}`,
      );
    }
    if (error instanceof GitError && error.kind === 'access-denied') {
      // Private or needs a token: not proof that it is gone, so its skills are kept.
      return recordFailure('access-denied', error.message);
    }
    if (isRetryable(error) && !ctx.finalAttempt) throw error;
    return recordFailure('crawl-failed', (error as Error).message);
  } finally {
    await snapshot?.dispose();
  }
}

/**
 * Parsing and scanning hundreds of skills is synchronous work; yielding now and then keeps the event loop
 * free for BullMQ's lock renewals (a blocked loop loses the lock and the job is taken as stalled).
 */
async function yieldEvery(count: number, every = 16): Promise<void> {
  if (count % every === 0) await new Promise((resolve) => setImmediate(resolve));
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

async function probeHeadOrExplain(url: string, remote: { token?: string; signal: AbortSignal }) {
  try {
    return await probeHead(url, remote);
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

/** A changed skill's content, ready to scan and store. */
export interface PreparedSkill {
  folder: { path: string; identity: string; revision: string };
  content: Omit<NonNullable<SeenSkill['content']>, 'flags' | 'verdict'>;
  texts: { path: string; content: Buffer }[];
  contentHash: string;
}

/** Files, parsed SKILL.md and tokens of one skill folder from its fetched blobs (parse failures into `errors`). */
export function prepareSkill(
  folder: { path: string; identity: string; revision: string },
  entries: TreeEntry[],
  blobs: Map<string, Buffer>,
  maxBytes: number,
  errors: ReportEntry[],
): PreparedSkill {
  const files: SkillFile[] = [];
  const stored: { sha256: string; size: number; content: Buffer }[] = [];
  const texts: { path: string; content: Buffer }[] = [];
  let skillMarkdown: Buffer | undefined;
  for (const entry of skillFiles(entries, folder.path)) {
    const path = relative(folder.path, entry.path);
    // A shipped .source or nested .atskills/ would break every saved copy: never indexed or served.
    const reserved = reservedSkillPath(path);
    if (reserved) {
      errors.push({ path: entry.path, code: 'reserved-path', message: `${reserved}; skipped` });
      continue;
    }
    const content = entry.sha ? blobs.get(entry.sha) : undefined;
    if (!content) {
      // Only blobs over the limit are left out of the fetch; their size is known to exceed it, not exactly.
      files.push({ path, size: 0, sha256: '', skipped: `larger than ${maxBytes} bytes` });
      continue;
    }
    const hash = sha256(content);
    files.push({ path, size: content.length, sha256: hash });
    stored.push({ sha256: hash, size: content.length, content });
    texts.push({ path, content });
    if (path === SKILL_FILE) skillMarkdown = content;
  }
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const contentHash = skillContentHash(files);
  const folderName = folder.path === '' ? (folder.identity.split('/')[1] ?? '') : basename(folder.path);
  const empty = {
    name: '',
    description: '',
    frontmatter: {},
    body: '',
    warnings: [],
    descriptionTokens: 0,
    bodyTokens: 0,
  };
  if (!skillMarkdown) {
    const parseError = {
      code: 'too-large',
      message: `SKILL.md is larger than ${maxBytes} bytes and was not downloaded.`,
    };
    errors.push({ path: folder.path, ...parseError });
    return { folder, content: { ...empty, parseError, files, blobs: stored }, texts, contentHash };
  }
  const parsed = tryParseSkillMarkdown(skillMarkdown, folderName);
  if (!parsed.ok) {
    const parseError = { code: parsed.error.code, message: parsed.error.message };
    errors.push({ path: folder.path, ...parseError });
    return { folder, content: { ...empty, parseError, files, blobs: stored }, texts, contentHash };
  }
  const doc = parsed.doc;
  return {
    folder,
    content: {
      name: doc.name,
      description: doc.description,
      frontmatter: doc.frontmatter,
      body: doc.body,
      warnings: doc.warnings,
      parseError: null,
      files,
      blobs: stored,
      descriptionTokens: countTokens(doc.description),
      bodyTokens: countTokens(doc.body),
    },
    texts,
    contentHash,
  };
}
