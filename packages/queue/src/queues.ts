// The queue registry (after OpenPanel's packages/queue/src/queues.ts): every queue's name, payload schema,
// default job options and job ids, in one package that producers (the API, the scheduler, the CLI) and the
// workers (packages/crawler) both import, so neither side imports the other.
import { isValidGithubOwner, isValidGithubRepo, isValidGithubRepositoryName } from '@atskills/protocol';
import type { JobsOptions } from 'bullmq';
import { z } from 'zod';

/** A GitHub account name (user or organization), by the protocol's GitHub name rules. */
export const OwnerName = z.string().refine(isValidGithubOwner, 'expected a GitHub account name');
/** A GitHub repository name (without its owner), by the protocol's GitHub name rules. */
export const RepoName = z.string().refine(isValidGithubRepo, 'expected a GitHub repository name');

/** `owner/repo` by the protocol's GitHub name rules (the same ones a `gh:` identity obeys). */
export const RepositoryName = z.string().refine(isValidGithubRepositoryName, 'expected owner/repo');

/** Where a discovery job finds repositories. */
export const DiscoverySource = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('repos'), repos: z.array(RepositoryName).max(100_000) }),
  z.object({ kind: z.literal('code-search') }),
  z.object({ kind: z.literal('org'), name: OwnerName }),
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
  owner: OwnerName,
  repo: RepoName,
  force: z.boolean().default(false),
  requestId: z.string().max(128).optional(),
});
export type RepositoryJobData = z.infer<typeof RepositoryJobData>;

/** One index of a team collection linked from a GitHub repository (SPEC 2.3). */
export const LinkJobData = z.object({
  linkId: z.number().int().positive(),
  /** Ignore the stored head: re-read and re-parse everything. */
  force: z.boolean().default(false),
  requestId: z.string().max(128).optional(),
});
export type LinkJobData = z.infer<typeof LinkJobData>;

/** The scheduler's tick job carries nothing; anything else on its queue is refused. */
export const ScheduleTickData = z.object({}).strict();
export type ScheduleTickData = z.infer<typeof ScheduleTickData>;

/** Every queue of the crawler: its name and payload schema, in one place. */
export const QUEUES = {
  discover: { name: 'crawl-discover', schema: DiscoverJobData },
  repository: { name: 'crawl-repository', schema: RepositoryJobData },
  /** Linked repositories of teams: their credentials and collections live in repository_links. */
  link: { name: 'crawl-link', schema: LinkJobData },
  /** One BullMQ job scheduler on it drives the re-crawl ticks. */
  schedule: { name: 'crawl-schedule', schema: ScheduleTickData },
} as const;

export type QueueKey = keyof typeof QUEUES;

/** The queues that carry crawl work (the schedule queue only carries ticks). */
export const CRAWL_QUEUE_NAMES = [QUEUES.discover.name, QUEUES.repository.name, QUEUES.link.name] as const;

/** The retry settings job options depend on (the crawler's CRAWL_ATTEMPTS and CRAWL_BACKOFF_MS). */
export interface RetrySettings {
  readonly crawlAttempts: number;
  readonly crawlBackoffMs: number;
}

/** Default options of each work queue's jobs: explicit retries, exponential backoff and retention. */
export function jobOptions(queue: 'discover' | 'repository' | 'link', settings: RetrySettings): JobsOptions {
  const base: JobsOptions = {
    attempts: settings.crawlAttempts,
    backoff: { type: 'exponential', delay: settings.crawlBackoffMs },
    // Postgres holds the crawl's results; Redis keeps only enough history to operate the queue.
    removeOnComplete: { age: 24 * 3600, count: 10_000 },
    removeOnFail: { age: 7 * 24 * 3600, count: 10_000 },
  };
  return queue === 'discover' ? { ...base, attempts: Math.min(settings.crawlAttempts, 3) } : base;
}

/**
 * Parses a job's payload with its queue's schema. Workers call it on every `job.data`: Redis is shared
 * transport, and a job written there by anything but this registry's producers is refused, not run.
 */
export function parseJobData<K extends QueueKey>(
  queue: K,
  data: unknown,
): z.infer<(typeof QUEUES)[K]['schema']> {
  const parsed = QUEUES[queue].schema.safeParse(data);
  if (!parsed.success) {
    throw new InvalidJobError(
      `Refused a ${QUEUES[queue].name} job: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'data'}: ${i.message}`).join('; ')}`,
    );
  }
  return parsed.data as z.infer<(typeof QUEUES)[K]['schema']>;
}

/** A job whose payload does not match its queue's schema (never retried: it cannot become valid). */
export class InvalidJobError extends Error {
  override name = 'InvalidJobError';
}

/**
 * Whether BullMQ takes a custom job id: it refuses ids that read as integers and ids holding `:` (its key
 * separator; it only lets through the three-part ids of its own legacy repeatable jobs). Both queues apply
 * it, so the in-process queue refuses what Redis would, and a test on either catches a bad id.
 */
export function jobIdProblem(id: string): string | null {
  if (id === '') return 'a job id cannot be empty';
  if (`${Number.parseInt(id, 10)}` === id) return `job id ${id} reads as an integer`;
  if (id.includes(':')) return `job id ${id} holds ":" (BullMQ refuses it)`;
  return null;
}

/**
 * Job ids, never holding `:` (BullMQ refuses it). Deterministic where a duplicate must be dropped: one
 * discovery per run, one repository job per run and repository.
 */
export const jobIds = {
  discover: (runId: number) => `discover-${runId}`,
  repository: (runId: number | null, owner: string, repo: string) =>
    `repo-${runId ?? 'adhoc'}-${owner.toLowerCase()}/${repo.toLowerCase()}`,
  /**
   * A link index per request (push, re-index, new link): not coalesced, because BullMQ keeps a finished job's
   * id for a day and a deterministic id would drop every later push in that time; a push during a running
   * index is never dropped, and the index itself is cheap when nothing changed and never writes over a
   * newer commit.
   */
  link: (linkId: number, requestedAt: number, nonce: string) => `link-${linkId}-${requestedAt}-${nonce}`,
};
