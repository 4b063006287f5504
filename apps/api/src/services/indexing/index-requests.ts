import {
  abandonIndexRequest,
  attachIndexRequestRun,
  currentRepositoryName,
  type Database,
  type IndexRequestOrigin,
  requestIndexing,
} from '@atskills/db';
import { IdentityError, isValidGithubRepositoryName, parseGithubRepository } from '@atskills/protocol';
import type { CrawlControl } from '@atskills/queue';
import { problem } from '../../problems.js';
import type { CallerBudget } from './caller-budget.js';

/** What index requests need of the crawl queue: starting a run (in-process or BullMQ). */
export type IndexQueue = Pick<CrawlControl, 'startRun'>;

/** The answer of an accepted index request. */
export interface IndexRequestAccepted {
  repo: string;
  /** False when the request joined one already open for the repository. */
  started: boolean;
  statusUrl: string;
}

/** The public URL of a repository's index status. */
export function repositoryStatusUrl(publicUrl: string, owner: string, name: string): string {
  return `${publicUrl}/v1/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}`;
}

/** `owner/repo` checked with GitHub's name rules (400 invalid-repository otherwise), before any request. */
export function parseRepositoryName(text: string): { owner: string; repo: string } {
  let parsed: { owner: string; repo: string };
  try {
    parsed = parseGithubRepository(text);
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
  constructor(
    private readonly db: Database,
    private readonly queue: IndexQueue | null,
    private readonly publicUrl: string,
    private readonly budget: CallerBudget,
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
   * Opens (or joins) the index request of owner/repo and starts its crawl when it is new. A renamed
   * repository is requested under its current name.
   */
  async request(
    owner: string,
    repo: string,
    origin: IndexRequestOrigin,
    options: { requestId?: string } = {},
  ): Promise<IndexRequestAccepted> {
    if (!this.queue) throw problem('unavailable', 'This instance has no crawl queue');
    const target = await currentRepositoryName(this.db, owner, repo);
    const opened = await requestIndexing(this.db, target.owner, target.name, origin);
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
    return {
      repo: `${target.owner}/${target.name}`,
      started: opened.created,
      statusUrl: repositoryStatusUrl(this.publicUrl, target.owner, target.name),
    };
  }
}
