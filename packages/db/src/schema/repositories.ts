import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

/** Why a skill of a repository is not listed (or listed with a caveat): the file, a stable code, the reason. */
export interface RepositoryProblem {
  path: string;
  code: string;
  message: string;
  /** 1-based line in the file, when the problem has one (YAML that does not parse). */
  line?: number;
}

/** A GitHub repository the crawler knows about, with what it last saw of it. */
export const repositories = pgTable(
  'repositories',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    owner: text('owner').notNull(),
    name: text('name').notNull(),
    defaultBranch: text('default_branch'),
    headRevision: text('head_revision'),
    description: text('description'),
    stars: integer('stars').notNull().default(0),
    license: text('license'),
    archived: boolean('archived').notNull().default(false),
    pushedAt: timestamp('pushed_at', { withTimezone: true }),
    topics: jsonb('topics').$type<string[]>().notNull().default([]),
    metadataEtag: text('metadata_etag'),
    lastCrawledAt: timestamp('last_crawled_at', { withTimezone: true }),
    /** indexed | unchanged | failed | gone */
    lastCrawlOutcome: text('last_crawl_outcome'),
    lastCrawlError: text('last_crawl_error'),
    /** When the scheduler should probe this repository again (activity-based back-off). */
    nextCrawlAt: timestamp('next_crawl_at', { withTimezone: true }),
    goneAt: timestamp('gone_at', { withTimezone: true }),
    /** GitHub's numeric id: a rename or transfer keeps it, so a moved repository is recognised. */
    githubId: bigint('github_id', { mode: 'number' }),
    /** Problems found by the last crawl that read the tree (kept while later crawls find it unchanged). */
    problems: jsonb('problems').$type<RepositoryProblem[]>().notNull().default([]),
    /** When a crawl job last started on it (an open index request is `crawling` after this). */
    crawlStartedAt: timestamp('crawl_started_at', { withTimezone: true }),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // GitHub owner and repository names are case-insensitive; identities keep the case they were found with.
    uniqueIndex('repositories_full_name_key').on(sql`lower(${t.owner})`, sql`lower(${t.name})`),
    index('repositories_next_crawl_idx').on(t.nextCrawlAt),
    index('repositories_github_id_idx').on(t.githubId),
  ],
);
