import {
  abandonIndexRequest,
  attachIndexRequestRun,
  currentRepositoryName,
  type Database,
  dropIndexRequest,
  type IndexRequestOrigin,
  pruneUnfoundRepositories,
  recentlyUnfound,
  requestIndexing,
} from '@atskills/db';
import { IdentityError, isValidGithubRepositoryName, parseGithubRepository } from '@atskills/protocol';
import type { CrawlControl } from '@atskills/queue';
import { problem } from '../../problems.js';
import type { CallerRequest } from '../caller-key.js';
import type { CallerBudget, GithubQuota } from './caller-budget.js';

/** What index requests need of the crawl queue: starting a run (in-process or BullMQ). */
export type IndexQueue = Pick<CrawlControl, 'startRun'>;

/** The answer of an accepted index request. */
export interface IndexRequestAccepted {
  repo: string;
  /** False when the request joined one already open for the repository. */
  started: boolean;
  statusUrl: string;
}

/**
 * The caller GitHub's quota is charged to: a verified token, else the client address (an Authorization
 * header the hub did not verify would let one caller mint a fresh budget per made-up token).
 */
export function quotaCaller(request: CallerRequest): string {
  const tokenId = request.viewer?.tokenId;
  return typeof tokenId === 'number' ? `token:${tokenId}` : `ip:${request.ip}`;
}

/** The public URL of a repository's index status. */
export function repositoryStatusUrl(publicUrl: string, owner: string, name: string): string {
  return `${publicUrl}/v1/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}`;
}

/** `owner/repo` checked with GitHub's name rules (400 invalid-repository otherwise), before any request. */
export function parseRepositoryName(text: string): { owner: string; repo: string } {
  let parsed: { owner: string; repo: string };
  try {
    parsed = parseGithubRepository(text, { insidePath: 'repository' });
  } catch (error) {
    if (!(error instanceof IdentityError)) throw error;
    throw problem('invalid-repository', error.message, { reason: error.code });
  }
  if (!isValidGithubRepositoryName(`${parsed.owner}/${parsed.repo}`)) {
    throw problem('invalid-repository', `"${text}" is not owner/repo with names GitHub accepts.`, {
      reason: 'bad-repo',
    });
  }
  return parsed;
}

/**
 * Index requests: validated, budgeted per caller, coalesced per repository (one open request, one crawl),
 * and crawled through the queue like any other run.
 */
export class IndexRequests {
  private lastPrune = 0;

  constructor(
    private readonly db: Database,
    private readonly queue: IndexQueue | null,
    private readonly publicUrl: string,
    private readonly budget: CallerBudget,
    /** GitHub's quota per caller for crawls of repositories the hub never indexed, and the 404 cache. */
    private readonly newRepos: { quota: GithubQuota; notFoundTtlS: number } | null = null,
  ) {}

  /** Whether this instance can crawl at all (it has a queue). */
  get enabled(): boolean {
    return this.queue !== null;
  }

  /** The caller's budget: throws 429 rate-limited when it is spent. */
  spend(caller: string): void {
    const wait = this.budget.take(caller);
    if (wait > 0) {
      throw problem(
        'rate-limited',
        `Too many index requests; retry in ${wait} s`,
        { retryAfterSeconds: wait },
        { 'retry-after': String(wait) },
      );
    }
  }

  /**
   * Opens (or joins) the index request of owner/repo and starts its crawl when it is new. A name the hub
   * knows as a renamed repository's old one is requested as asked: the crawl asks GitHub about that name,
   * follows the rename when GitHub still redirects it, and indexes the repository made there since when
   * GitHub answers with another one (GitHub drops the redirect then, and so does the hub).
   */
  async request(
    owner: string,
    repo: string,
    origin: IndexRequestOrigin,
    /**
     * `caller`: whose quota a crawl of a name the hub never saw is charged to. `recheck` (webhooks: true
     * unless said otherwise): ask GitHub even when it called the repository missing or private a moment ago,
     * as a `repository` event must.
     */
    options: { requestId?: string; caller?: string; recheck?: boolean } = {},
  ): Promise<IndexRequestAccepted> {
    if (!this.queue) throw problem('unavailable', 'This instance has no crawl queue');
    await this.prune();
    const current = await currentRepositoryName(this.db, owner, repo);
    // Only GitHub can tell whether an old name is still the moved repository's (see above).
    const target = current.moved ? { owner, name: repo, known: true } : current;
    const statusUrl = repositoryStatusUrl(this.publicUrl, target.owner, target.name);
    // GitHub said 404 (or private) a moment ago: answered from the hub, without a crawl or a GitHub call.
    const recheck = options.recheck ?? origin === 'webhook';
    const unfound =
      this.newRepos && !recheck
        ? await recentlyUnfound(this.db, target.owner, target.name, this.newRepos.notFoundTtlS)
        : undefined;
    if (unfound) {
      const wait = Math.max(1, Math.ceil((unfound.retryAt.getTime() - Date.now()) / 1000));
      // Private reads as missing (SPEC 2.2): whoever asks must not learn that a private repository exists.
      throw problem(
        'not-found',
        `${target.owner}/${target.name} was not found on GitHub (or is not public) at ${unfound.crawledAt.toISOString()}; ask again after ${unfound.retryAt.toISOString()}`,
        { statusUrl, reason: 'repository-not-found' },
        { 'retry-after': String(wait) },
      );
    }
    const opened = await requestIndexing(this.db, target.owner, target.name, origin);
    if (opened.created && options.caller && this.newRepos && !target.known) {
      // A crawl of a name the hub never saw: GitHub's quota is spent per caller (joining costs nothing).
      const wait = this.newRepos.quota.take(options.caller);
      if (wait > 0) {
        await dropIndexRequest(this.db, opened.id);
        throw problem(
          'rate-limited',
          `Too many index requests for repositories the hub does not know; retry in ${wait} s`,
          { retryAfterSeconds: wait },
          { 'retry-after': String(wait) },
        );
      }
    }
    if (opened.created) {
      try {
        const runId = await this.queue.startRun({
          kind: 'request',
          source: { kind: 'repos', repos: [`${target.owner}/${target.name}`] },
          ...(options.requestId ? { requestId: options.requestId } : {}),
        });
        await attachIndexRequestRun(this.db, opened.id, runId);
      } catch (error) {
        await abandonIndexRequest(this.db, opened.id);
        throw error;
      }
    }
    return { repo: `${target.owner}/${target.name}`, started: opened.created, statusUrl };
  }

  /** Forgets expired not-found names (at most once a minute per process; a failure only waits for the next). */
  private async prune(): Promise<void> {
    if (!this.newRepos || Date.now() - this.lastPrune < 60_000) return;
    this.lastPrune = Date.now();
    await pruneUnfoundRepositories(this.db, this.newRepos.notFoundTtlS).catch(() => {});
  }
}
