import type { RepositoryMetadata } from '@atskills/db';
import { isRateLimitAnswer } from '@atskills/github-auth';
import { trimTrailingSlashes } from '@atskills/protocol';
import type { components } from '@octokit/openapi-types';
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import { Octokit } from '@octokit/rest';
import Bottleneck from 'bottleneck';
import type { Logger } from 'pino';
import { DEFAULT_SEARCH_INTERVAL_MS } from '../config.js';
import { RateLimitedError, retryAfterFromHeaders } from './rate-limited-error.js';
import { type SearchPage, splitSearch } from './search-split.js';

type FullRepository = components['schemas']['full-repository'];
type MinimalRepository = components['schemas']['minimal-repository'];

export type MetadataResult =
  | {
      status: 'ok';
      etag: string | null;
      metadata: RepositoryMetadata;
      /** GitHub's `private`: such a repository never enters the public index (SPEC 2.8). */
      private: boolean;
    }
  | { status: 'not-modified' }
  | { status: 'not-found' };

/** Requests that hit a rate limit wait in-process only when the wait is this short; longer ones delay the job. */
const IN_PROCESS_WAIT_LIMIT_S = 5;

const ThrottledOctokit = Octokit.plugin(throttling, retry);

/** GitHub's code search indexes files up to 384 KB; larger ones are asked for as one last part. */
const CODE_SEARCH_MAX_FILE_BYTES = 384 * 1024;

/**
 * One search pacer per interval for the whole process, as octokit keeps its own: GitHub counts a token's
 * searches, not a client's, so clients made apart (the crawler's, a discovery's) must queue together.
 */
const searchPacers = new Map<number, Bottleneck.Group>();

function searchPacer(intervalMs: number): Bottleneck.Group {
  let pacer = searchPacers.get(intervalMs);
  if (!pacer) {
    pacer = new Bottleneck.Group({
      id: `atskills-search-${intervalMs}`,
      maxConcurrent: 1,
      minTime: intervalMs,
    });
    searchPacers.set(intervalMs, pacer);
  }
  return pacer;
}

/** Repository topics that mark skill collections, searched besides code search. */
const SKILL_TOPICS = ['agent-skills', 'claude-skills'];

/** The few GitHub REST calls the crawler makes, with throttling, retries and rate-limit handling. */
export class GithubClient {
  private readonly octokit: InstanceType<typeof ThrottledOctokit>;
  private readonly logger: Logger;

  constructor(options: {
    baseUrl: string;
    token?: string;
    logger: Logger;
    /** Called with GitHub's `x-ratelimit-remaining` of every answer (for the rate-limit gauge). */
    onRateLimitRemaining?: (remaining: number, resource: string) => void;
    /** Least time between two search requests (ms; GITHUB_SEARCH_INTERVAL_MS). */
    searchIntervalMs?: number;
  }) {
    const { logger } = options;
    this.logger = logger;
    const onLimit =
      (kind: string) =>
      (
        retryAfter: number,
        request: { method: string; url: string },
        _octokit: unknown,
        retryCount: number,
      ) => {
        logger.warn({ kind, retryAfter, url: request.url, retryCount }, 'github rate limit');
        return retryAfter <= IN_PROCESS_WAIT_LIMIT_S && retryCount < 1;
      };
    this.octokit = new ThrottledOctokit({
      baseUrl: trimTrailingSlashes(options.baseUrl),
      auth: options.token,
      userAgent: 'atskills-crawler',
      throttle: {
        onRateLimit: onLimit('primary'),
        onSecondaryRateLimit: onLimit('secondary'),
        search: searchPacer(options.searchIntervalMs ?? DEFAULT_SEARCH_INTERVAL_MS),
      },
      // 429 is a rate limit: the throttling plugin and the job delay handle it, not blind retries.
      retry: { doNotRetry: [400, 401, 403, 404, 410, 422, 429, 451] },
      // Octokit logs every non-2xx answer (304s and 404s included) as an error; the crawler reports what
      // matters itself, so octokit's own lines are kept for debugging only.
      log: {
        debug: () => {},
        info: () => {},
        warn: (m: string) => logger.debug(m),
        error: (m: string) => logger.debug(m),
      },
    });
    const report = options.onRateLimitRemaining;
    if (report) {
      const read = (headers: Record<string, unknown> | undefined) => {
        const remaining = Number(headers?.['x-ratelimit-remaining']);
        if (Number.isFinite(remaining))
          report(remaining, String(headers?.['x-ratelimit-resource'] ?? 'core'));
      };
      this.octokit.hook.after('request', (response) => read(response.headers));
      this.octokit.hook.error('request', (error) => {
        read((error as { response?: { headers?: Record<string, unknown> } }).response?.headers);
        throw error;
      });
    }
  }

  /** GET /repos/{owner}/{repo}, conditional on the stored ETag (a 304 costs no rate limit). */
  async repositoryMetadata(owner: string, repo: string, etag?: string | null): Promise<MetadataResult> {
    return this.metadataAnswer(() =>
      this.octokit.rest.repos.get({ owner, repo, headers: etag ? { 'if-none-match': etag } : {} }),
    );
  }

  /**
   * GET /repositories/{id}: the repository by GitHub's numeric id, which renames and transfers keep, so the
   * answer names where the repository lives now whatever name the hub (or a webhook) knew it by.
   */
  async repositoryById(id: number, etag?: string | null): Promise<MetadataResult> {
    return this.metadataAnswer(() =>
      this.octokit.request('GET /repositories/{id}', {
        id,
        headers: etag ? { 'if-none-match': etag } : {},
      }),
    );
  }

  private async metadataAnswer(
    read: () => Promise<{ data: unknown; headers: { etag?: string } }>,
  ): Promise<MetadataResult> {
    try {
      const response = await read();
      const data = response.data as FullRepository;
      return {
        status: 'ok',
        etag: response.headers.etag ?? null,
        metadata: toMetadata(data),
        // Anything but an explicit `false` is treated as private: an answer that does not say is not proof.
        private: data.private !== false || (data.visibility !== undefined && data.visibility !== 'public'),
      };
    } catch (error) {
      const status = statusOf(error);
      if (status === 304) return { status: 'not-modified' };
      if (status === 404 || status === 410) return { status: 'not-found' };
      throw asRateLimited(error) ?? error;
    }
  }

  /**
   * Every repository that holds a file named SKILL.md: code search split by file size until each part is
   * under GitHub's 1,000-result cap, plus repository search by the skills topics (split by stars).
   */
  async searchSkillRepositories(): Promise<string[]> {
    const names = new Set<string>();
    const code = await splitSearch(
      (q, page, perPage) => this.searchPage('code', q, page, perPage),
      'filename:SKILL.md',
      { qualifier: 'size', min: 0, max: CODE_SEARCH_MAX_FILE_BYTES },
    );
    for (const name of code.names) names.add(name);
    let truncated = code.truncated;
    for (const topic of SKILL_TOPICS) {
      const found = await splitSearch(
        (q, page, perPage) => this.searchPage('repositories', q, page, perPage),
        `topic:${topic}`,
        { qualifier: 'stars', min: 0, max: 1_000_000 },
      );
      for (const name of found.names) names.add(name);
      truncated = [...truncated, ...found.truncated];
    }
    this.logger.info(
      { repositories: names.size, codeSearchParts: code.parts.length, requests: code.requests, truncated },
      'code search discovery',
    );
    return [...names].sort();
  }

  /** One page of GitHub's code or repository search. */
  private async searchPage(
    kind: 'code' | 'repositories',
    q: string,
    page: number,
    perPage: number,
  ): Promise<SearchPage> {
    try {
      const response = await this.octokit.request(`GET /search/${kind}`, { q, page, per_page: perPage });
      const data = response.data as {
        total_count: number;
        incomplete_results: boolean;
        items: ({ repository: { full_name: string } } | { full_name: string })[];
      };
      return {
        total: data.total_count,
        incomplete: data.incomplete_results,
        names: data.items.map((item) => ('repository' in item ? item.repository.full_name : item.full_name)),
        count: data.items.length,
      };
    } catch (error) {
      throw asRateLimited(error) ?? error;
    }
  }

  /** Repositories of an organization, or of a user when no organization has that name. */
  async ownerRepositories(owner: string): Promise<string[]> {
    // Forks repeat their parent's skills under another name; the parent is crawled on its own.
    const collect = (repos: MinimalRepository[]) => repos.filter((r) => !r.fork).map((r) => r.full_name);
    try {
      return collect(
        await this.octokit.paginate(this.octokit.rest.repos.listForOrg, { org: owner, per_page: 100 }),
      );
    } catch (error) {
      if (statusOf(error) !== 404) throw asRateLimited(error) ?? error;
    }
    try {
      return collect(
        (await this.octokit.paginate(this.octokit.rest.repos.listForUser, {
          username: owner,
          per_page: 100,
        })) as MinimalRepository[],
      );
    } catch (error) {
      if (statusOf(error) === 404)
        throw new Error(`GitHub has no organization or user named "${owner}" (404).`);
      throw asRateLimited(error) ?? error;
    }
  }
}

function toMetadata(data: FullRepository): RepositoryMetadata {
  return {
    owner: data.owner.login,
    name: data.name,
    defaultBranch: data.default_branch ?? null,
    description: data.description ?? null,
    stars: data.stargazers_count ?? 0,
    license: data.license?.spdx_id && data.license.spdx_id !== 'NOASSERTION' ? data.license.spdx_id : null,
    archived: data.archived ?? false,
    pushedAt: data.pushed_at ? new Date(data.pushed_at) : null,
    topics: data.topics ?? [],
    githubId: typeof data.id === 'number' ? data.id : null,
  };
}

function statusOf(error: unknown): number | undefined {
  return typeof error === 'object' && error !== null && 'status' in error ? Number(error.status) : undefined;
}

/** A 403/429 rate-limit answer as a RateLimitedError (other errors: undefined). */
export function asRateLimited(error: unknown): RateLimitedError | undefined {
  if (!isRateLimitAnswer(error)) return undefined;
  const headers = ((error as { response?: { headers?: Record<string, unknown> } }).response?.headers ??
    {}) as Record<string, unknown>;
  const message = error instanceof Error ? error.message : '';
  return new RateLimitedError(
    retryAfterFromHeaders(headers),
    `GitHub rate limit (${statusOf(error)}): ${message}`,
  );
}
