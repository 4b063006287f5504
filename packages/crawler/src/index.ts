export {
  type CrawlerSettings,
  CrawlerSettingsSchema,
  type CrawlerValues,
  crawlerSettingsFrom,
  loadSettings,
  settingsWith,
} from './config.js';
export { type Crawler, type CreateCrawlerOptions, createCrawler } from './crawler.js';
export { probeHead, RemoteSnapshot } from './git/remote-snapshot.js';
export { GithubClient } from './github/github-client.js';
export { RateLimitedError } from './github/rate-limited-error.js';
export { InProcessQueue } from './in-process-queue.js';
export { discoverRepositories, listRepositories } from './jobs/discover.list.js';
export type { JobContext } from './jobs/job-context.js';
export {
  indexLink,
  LINK_MARKER_FILE,
  type LinkIndexDeps,
  type LinkIndexJobData,
  type LinkIndexOutcome,
  markerAllows,
} from './jobs/link.index.js';
export { type CrawlDeps, crawlRepository, type RepositoryJobResult } from './jobs/repository.crawl.js';
export { SCANNER_VERSION } from './jobs/safety-verdict.js';
export { createLogger } from './logger.js';
export { checkRedis, QueueUnavailableError } from './queue-unavailable.js';
export { claimRunOwnership, type RunOwnership } from './run-ownership.js';
export {
  LINK_REFRESH_MS,
  nextCrawlAt,
  type RecrawlScheduler,
  recrawlInterval,
  runRecrawlTick,
  startRecrawlScheduler,
} from './schedule.js';
