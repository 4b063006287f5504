import { isValidGithubRepositoryName } from '@atskills/protocol';
import type { JobsOptions } from 'bullmq';
import { z } from 'zod';
import type { CrawlerSettings } from './config.js';

/** `owner/repo` by the protocol's GitHub name rules (the same ones a `gh:` identity obeys). */
export const RepositoryName = z.string().refine(isValidGithubRepositoryName, 'expected owner/repo');

/** Where a discovery job finds repositories. */
export const DiscoverySource = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('repos'), repos: z.array(RepositoryName).max(100_000) }),
  z.object({ kind: z.literal('code-search') }),
  z.object({ kind: z.literal('org'), name: z.string().min(1).max(39) }),
  /** Every repository the index already knows (rebuild, scheduled re-crawl). */
  z.object({ kind: z.literal('known') }),
]);
export type DiscoverySource = z.infer<typeof DiscoverySource>;

export const DiscoverJobData = z.object({
  runId: z.number().int().positive(),
  source: DiscoverySource,
  /** Ignore stored heads and revisions: re-download and re-parse everything. */
  force: z.boolean().default(false),
  /** The id of the HTTP request that started the run, so the jobs' log lines join that request's. */
  requestId: z.string().max(128).optional(),
});
export type DiscoverJobData = z.infer<typeof DiscoverJobData>;

export const RepositoryJobData = z.object({
  runId: z.number().int().positive().nullable(),
  owner: z.string().min(1),
  repo: z.string().min(1),
  force: z.boolean().default(false),
  requestId: z.string().max(128).optional(),
});
export type RepositoryJobData = z.infer<typeof RepositoryJobData>;

/** Every queue of the crawler: its name, payload schema and default job options, in one place. */
export const QUEUES = {
  discover: { name: 'crawl-discover', schema: DiscoverJobData },
  repository: { name: 'crawl-repository', schema: RepositoryJobData },
} as const;

export type QueueKey = keyof typeof QUEUES;

/** Default options of each queue's jobs: explicit retries, exponential backoff and retention. */
export function jobOptions(queue: QueueKey, settings: CrawlerSettings): JobsOptions {
  const base: JobsOptions = {
    attempts: settings.CRAWL_ATTEMPTS,
    backoff: { type: 'exponential', delay: settings.CRAWL_BACKOFF_MS },
    // Postgres holds the crawl's results; Redis keeps only enough history to operate the queue.
    removeOnComplete: { age: 24 * 3600, count: 10_000 },
    removeOnFail: { age: 7 * 24 * 3600, count: 10_000 },
  };
  return queue === 'discover' ? { ...base, attempts: Math.min(settings.CRAWL_ATTEMPTS, 3) } : base;
}

/** Deterministic job ids: one repository job per run (duplicates in a run are dropped; a new run enqueues again). */
export const jobIds = {
  discover: (runId: number) => `discover-${runId}`,
  repository: (runId: number | null, owner: string, repo: string) =>
    `repo:${runId ?? 'adhoc'}:${owner.toLowerCase()}/${repo.toLowerCase()}`,
};
