/**
 * Shared set-up of the linked-repository tests: the GitHub stand-in with its private side, a hub
 * configured with the stand-in's App and a token key, and the crawler's real link queue (in-process, or
 * BullMQ on the test Redis under a prefix of this file's own), awaited until the queue is idle, so a test
 * sees the index's result when the request returns.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  type Crawler,
  type CrawlerSettings,
  createCrawler,
  createLogger,
  indexLink,
  settingsWith,
} from '@atskills/crawler';
import { LinkAccess, loadGithubAuthSettings } from '@atskills/github-auth';
import type { FastifyInstance } from 'fastify';
import { commitToRepo, createRepo } from '../../../test/support/corpus.js';
import { PrivateGithub } from '../../../test/support/github-private.js';
import { type GithubStandin, startGithubStandin } from '../../../test/support/github-standin.js';
import { dropQueuePrefix, redisUrl, uniqueQueuePrefix } from '../../../test/support/redis.js';
import type { LinkIndexQueue } from '../src/services/links/links.js';
import { createTestHub, type TestHub } from './support/app.js';

/** Which queue carries the link jobs: the crawler's in-process queue, or BullMQ on Redis. */
export type LinkQueueMode = 'in-process' | 'bullmq';

/** Both queue modes, for `describe.each`. */
export const LINK_QUEUE_MODES: LinkQueueMode[] = ['in-process', 'bullmq'];

/** A hub that links repositories of a stand-in GitHub. */
export interface LinkedHub {
  mode: LinkQueueMode;
  crawler: Crawler;
  /** The settings the crawler was made with (its queue prefix, for a second crawler on the same queues). */
  crawlerSettings: CrawlerSettings;
  /** The GitHub access the crawler's link jobs use. */
  access: LinkAccess;
  hub: TestHub;
  app: FastifyInstance;
  standin: GithubStandin;
  github: PrivateGithub;
  root: string;
  /** The hub's settings of the stand-in's App and the token key (LINK_TOKEN_KEYS). */
  env: Record<string, string>;
  /** Work folders of the repositories made with addRepo (to commit to). */
  work: Map<string, string>;
  /** Creates a repository (private unless said otherwise). */
  addRepo(fullName: string, files: Record<string, string>, options?: { public?: boolean }): Promise<void>;
  /** Commits and pushes to a repository made with addRepo; returns the new head. */
  push(fullName: string, changes: Record<string, string | null>): Promise<string>;
  /** Runs the link index now (what a worker does with a queued job). */
  index(linkId: number, force?: boolean): Promise<string>;
  close(): Promise<void>;
}

/** Starts the stand-in and a hub wired to it (env: extra hub settings) with its link jobs on `mode`'s queue. */
export async function createLinkedHub(
  label: string,
  env: Record<string, string> = {},
  mode: LinkQueueMode = 'in-process',
): Promise<LinkedHub> {
  const root = await mkdtemp(path.join(tmpdir(), `links-${label}-`));
  const github = new PrivateGithub();
  const work = new Map<string, string>();
  // The repositories are created later: the stand-in lists the folder per request.
  const standin = await startGithubStandin({ reposRoot: root, private: github });
  const hubEnv = {
    GITHUB_API_URL: standin.apiUrl,
    GITHUB_APP_ID: github.appId,
    GITHUB_APP_PRIVATE_KEY: github.appPrivateKeyPem.replace(/\n/g, '\\n'),
    GITHUB_APP_WEBHOOK_SECRET: github.webhookSecret,
    LINK_TOKEN_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    ...env,
  };
  const access = new LinkAccess(loadGithubAuthSettings(hubEnv), standin.apiUrl);
  const settings = settingsWith({ GIT_BASE_URL: standin.gitUrl, LOG_LEVEL: 'silent' });
  const logger = createLogger('silent');
  let hub: TestHub | undefined;
  const run = async (linkId: number, force = false) => {
    const controller = new AbortController();
    const result = await indexLink(
      { db: (hub as TestHub).db.db, settings, access, logger },
      { linkId, force },
      { signal: controller.signal, finalAttempt: true },
    );
    return result.outcome;
  };
  const redis = mode === 'bullmq' ? await redisUrl() : undefined;
  const prefix = uniqueQueuePrefix(label);
  let crawler: Crawler | undefined;
  const queue: LinkIndexQueue = {
    // What the hub does in production (the crawler's enqueueLinkIndex), then waits for the link queue.
    async enqueue(linkId, options) {
      await (crawler as Crawler).enqueueLinkIndex(linkId, options);
      await linkQueueIdle(crawler as Crawler);
    },
  };
  hub = await createTestHub(label, hubEnv, { linkQueue: queue, linkAccess: access });
  const crawlerSettings = settingsWith({
    GIT_BASE_URL: standin.gitUrl,
    GITHUB_API_URL: standin.apiUrl,
    LOG_LEVEL: 'silent',
    CRAWL_BACKOFF_MS: '100',
    CRAWL_QUEUE_PREFIX: prefix,
  });
  crawler = createCrawler({
    db: hub.db.db,
    settings: crawlerSettings,
    logger,
    linkAccess: access,
    ...(redis ? { redis } : {}),
  });
  return {
    mode,
    crawler,
    crawlerSettings,
    access,
    hub,
    app: hub.app,
    standin,
    github,
    root,
    env: hubEnv,
    work,
    async addRepo(fullName, files, options = {}) {
      const { workDir } = await createRepo(root, fullName, files);
      work.set(fullName, workDir);
      if (!options.public) github.makePrivate(fullName);
    },
    push: (fullName, changes) => commitToRepo(work.get(fullName) as string, changes),
    index: run,
    async close() {
      await crawler?.close();
      await hub?.close();
      await standin.close();
      if (redis) await dropQueuePrefix(redis, prefix);
    },
  };
}

/** Resolves when the crawler's link queue has nothing waiting, delayed or running. */
async function linkQueueIdle(crawler: Crawler, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const counts = (await crawler.counts())['crawl-link'] ?? {};
    const busy = ['waiting', 'active', 'delayed', 'prioritized'].some((state) => (counts[state] ?? 0) > 0);
    if (!busy) return;
    if (Date.now() > end) throw new Error(`the link queue is still busy: ${JSON.stringify(counts)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** POST /v1/teams/<team>/links. */
export function link(app: FastifyInstance, team: string, body: unknown, headers: Record<string, string>) {
  return app.inject({
    method: 'POST',
    url: `/v1/teams/${team}/links`,
    headers: { 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(body),
  });
}

/** POST /v1/teams/<team>/links of `repo` (or one folder of it) into `collection`, through the GitHub App. */
export function linkWithApp(
  app: FastifyInstance,
  team: string,
  repo: string,
  collection: string,
  headers: Record<string, string>,
  folder?: string,
) {
  return link(
    app,
    team,
    { repo, collection, ...(folder ? { folder } : {}), credential: { kind: 'app' } },
    headers,
  );
}
