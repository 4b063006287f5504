import type { CrawlRunKind, CrawlRunProgress } from '@atskills/db';
import type { DiscoverySource } from './queues.js';

/** Job counts per queue name, then per state (waiting, active, delayed, completed, failed, ...). */
export interface QueueCounts {
  [queue: string]: Record<string, number>;
}

/** What starting a crawl run takes. */
export interface StartRunInput {
  kind: CrawlRunKind;
  source: DiscoverySource;
  /** Ignore stored heads and revisions: re-download and re-parse everything. */
  force?: boolean;
  /** The id of the HTTP request that started the run, so the jobs' log lines join that request's. */
  requestId?: string;
}

/**
 * The port producers use to drive crawls (the API's ops routes, the scheduler, the CLI): start a run, read
 * its progress, count the queues. The crawler (packages/crawler) implements it over BullMQ or in-process.
 */
export interface CrawlControl {
  readonly mode: 'bullmq' | 'in-process';
  /** Records a run and enqueues its discovery; returns the run id. */
  startRun(input: StartRunInput): Promise<number>;
  /** Progress of a run from Postgres (null when there is no such run). */
  progress(runId: number): Promise<CrawlRunProgress | null>;
  /** Job counts of the crawl queues. */
  counts(): Promise<QueueCounts>;
  /** Queues an index of a linked repository (a new link, a push, an owner's re-index). */
  enqueueLinkIndex(linkId: number, options?: { force?: boolean; requestId?: string }): Promise<void>;
}
