export type { CrawlControl, QueueCounts, StartRunInput } from './crawl-control.js';
export {
  DiscoverySourceError,
  discoverySourceOf,
  parseDiscoverArg,
  parseRepositoryArg,
} from './discovery-source.js';
export {
  CRAWL_QUEUE_NAMES,
  DiscoverJobData,
  DiscoverySource,
  InvalidJobError,
  jobIdProblem,
  jobIds,
  jobOptions,
  LinkJobData,
  OwnerName,
  parseJobData,
  QUEUES,
  type QueueKey,
  RepoName,
  RepositoryJobData,
  RepositoryName,
  type RetrySettings,
  ScheduleTickData,
} from './queues.js';
